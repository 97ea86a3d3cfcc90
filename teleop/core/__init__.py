"""The foundation's foundation: errors, geometry, seeding, paths and the project's conventions.

Nothing here imports anything else of the project.
"""
