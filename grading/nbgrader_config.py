"""nbgrader's settings for the course: `make release` copies this file into the course
directory, where every nbgrader command reads it (run them from that directory)."""

c = get_config()  # noqa: F821 (nbgrader's configuration loader defines get_config)

c.CourseDirectory.course_id = "autodiff_tutor"

# Each exercise in notebooks/ keeps the student's skeleton (`answer = ...`,
# `raise NotImplementedError("your code here")`) around its solution: the solution goes,
# and leaves no stub of its own, so a student's notebook runs top to bottom.
c.ClearSolutions.code_stub = {"python": ""}
c.ClearSolutions.text_stub = ""

# A lesson runs in 1 to 20 s (lesson 07 trains networks); no cell takes a minute.
c.Execute.timeout = 120

# Students get no saved widget state either (lesson 06's report view of the solution's
# backward was in it): the release keeps only the notebook's kernel and language.
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.converters import GenerateAssignment  # noqa: E402

c.GenerateAssignment.preprocessors = [
    *GenerateAssignment.class_traits()["preprocessors"].default(),
    ClearMetadataPreprocessor,
]
c.ClearMetadataPreprocessor.enabled = True
c.ClearMetadataPreprocessor.clear_cell_metadata = False
c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {("kernelspec",), ("language_info",)}
