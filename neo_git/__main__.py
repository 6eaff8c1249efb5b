"""`python -m neo_git …` is `git neo …`."""
from neo_git.cli import run

run()
