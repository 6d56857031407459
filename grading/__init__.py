"""Graded releases of the course with nbgrader: ``python -m grading.release`` (``make release``)."""
