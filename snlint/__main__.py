"""`python -m snlint`: the same command as the `snlint` script."""

from snlint.cli import main

if __name__ == "__main__":
    main(prog_name="snlint")
