"""`python -m snlint`: the same command as the `snlint` script."""

from snlint.cli import entry

if __name__ == "__main__":
    entry()
