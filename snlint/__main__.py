"""`python -m snlint`: the same command as the `snlint` script."""

from snlint.launch import entry

if __name__ == "__main__":
    entry()
