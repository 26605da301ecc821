"""The checkers autograder: grades one submission in the sandbox and explains every point, in
the course platforms' format (docs/GRADER.md)."""
