"""Forward mode: ``tangent`` writes a JVP function beside the primal steps."""
