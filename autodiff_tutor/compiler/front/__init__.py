"""The front end: a user's function read, fenced, desugared and normalized.

``source`` reads the function and the names it can see; ``names`` gives a stand-in to a
free name the generated code also uses; ``fence`` refuses what is outside the supported
subset, located; :mod:`.desugar` rewrites loop forms, jumps, helpers and structures into
the few shapes the compiler knows; :mod:`.normalize` makes one operation per statement
(an ``ir.Program``), the same whatever is differentiated.
"""
