"""``python -m srtui.cli.write_command_table``: write ``command_table.py`` from the commands'
docstrings (a module of its own: the table imports nothing, so nothing imports back into it)."""

from srtui.cli.lazy import write_table

if __name__ == "__main__":
    write_table()
