# nbgrader's settings file runs inside nbgrader's configuration loader (get_config), not
# as a module: pytest's doctest collection leaves it out.
collect_ignore = ["nbgrader_config.py"]
