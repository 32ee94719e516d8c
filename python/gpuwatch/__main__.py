"""`gpuwatch ARGS` and `python -m gpuwatch ARGS`: the command inside the package, exec'd in
this process's place, so that its exit status and signals are the user's own (gpuwatch run
forwards SIGINT/SIGTERM to the traced program as it does when started directly)."""
import os
import sys

from gpuwatch import command_path


def main():
    exe = command_path()
    try:
        os.execv(exe, ["gpuwatch"] + sys.argv[1:])
    except OSError as err:
        sys.stderr.write("gpuwatch: cannot run %s: %s (reinstall the package)\n" % (exe, err))
        return 127


if __name__ == "__main__":
    sys.exit(main())
