"""`python -m neo_git.cli …` is `git neo …`."""
from neo_git.cli import run

run()
