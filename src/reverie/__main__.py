"""``python -m reverie``: the ``reverie`` command (the same as the installed script)."""

from reverie.cli import main

if __name__ == "__main__":
    main()
