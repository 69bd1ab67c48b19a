"""The errors dynpr raises on purpose, and the exit status each one means.

Every expected failure is a :class:`DynprError` whose message is one line that
names the file, flag or config key at fault and says what to do. The command
line prints it as ``dynpr: error: <message>`` and exits with
:attr:`DynprError.exit_code`:

* 2 -- :class:`InputError`: the user's input is wrong (a flag, a graph or batch
  file, a config or catalog value, a results file edited or cut short);
* 1 -- :class:`ResourceError`: the machine or the network is (no GPU, a failed
  download, a full or read-only disk), and :class:`ConvergenceError` (a run
  stopped at ``max_iterations``, raised only when asked for).

The input errors also derive from ``ValueError`` (and the unknown-name one from
``KeyError``), the resource errors from ``RuntimeError``, so callers catching
the built-in exceptions keep working.
"""

from __future__ import annotations

#: exit status for bad input (argparse uses 2 for bad arguments too)
EXIT_INPUT = 2
#: exit status for a problem of the environment (GPU, network, disk)
EXIT_RESOURCE = 1


class DynprError(Exception):
    """Base of every error dynpr raises on purpose; its message is one line for the user."""

    exit_code = EXIT_RESOURCE


class InputError(DynprError, ValueError):
    """Bad input: a flag, graph, batch, config, catalog or results file that dynpr refuses."""

    exit_code = EXIT_INPUT


class ParseError(InputError):
    """A graph file that does not parse (names the file and line)."""


class GraphError(InputError):
    """A graph whose arrays are inconsistent (shape, dtype, offsets, ids, transpose, checksum)."""


class BatchError(InputError):
    """A batch that does not fit its graph, or a batch file that is corrupt or made for another graph."""


class ChecksumError(InputError):
    """A file whose size or sha256 differs from the recorded one: corrupt, edited or another file."""


class CountMismatchError(InputError):
    """A prepared graph whose counts differ from the catalog's published ones."""


class CatalogError(InputError):
    """The dataset catalog (or its lock file) is missing or does not match its schema."""


class UnknownDatasetError(InputError, KeyError):
    """A dataset name that the catalog does not list."""

    def __str__(self) -> str:  # KeyError would print the message quoted, as a repr
        return str(self.args[0])


class ResultsError(InputError):
    """A results file that is incomplete or holds values outside their range; names the rule to rerun."""


class ResourceError(DynprError, RuntimeError):
    """The environment failed: no GPU, no network, a full or read-only disk."""

    exit_code = EXIT_RESOURCE


class NoGpuError(ResourceError):
    """The GPU backend was asked for but CuPy or a CUDA device is missing."""


class DeviceMemoryError(ResourceError, MemoryError):
    """The GPU has too little memory for a run, said before allocating (or after CuPy ran out)."""


class DownloadError(ResourceError):
    """A download that failed; the message names the URL or file and the fix."""


class InterruptedDownloadError(DownloadError):
    """A transfer that kept breaking off; its ``.part`` file is kept so the next run resumes."""


class DownloadChecksumError(DownloadError, ChecksumError):
    """A downloaded file whose size or sha256 differs from the catalog's or the lock file's."""

    exit_code = EXIT_RESOURCE


class ConvergenceError(DynprError, RuntimeError):
    """A run stopped at ``max_iterations`` before its change met the tolerance (raised only with
    ``PageRankOptions.raise_on_max_iterations``); ``result`` holds what it computed."""

    exit_code = EXIT_RESOURCE

    def __init__(self, message: str, result):
        super().__init__(message)
        self.result = result
