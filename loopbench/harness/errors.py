"""The errors loopbench raises, in three families: every exception class of the product
derives from exactly one of them (tests/test_error_families.py checks it).

    BadInput (ValueError)         what was given is wrong: a flag, a name, a file, a folder,
    │                             a prompt file, a grader function, an output path.
    │                             ``loopbench`` prints its one line and exits 2; the API
    │                             raises it as it is; inside a run it is recorded (a prompt
    │                             too large, SlotTooLarge, is ``refused``; a grader function
    │                             that fails, GraderFunctionError, is a failed grading). Each
    │                             module says what it refuses with a subclass of its own,
    │                             whose message already names the file, line and field:
    │                             ArmError, TaskSetError, ConfigError, ResultsError,
    │                             StructureError, OutputError, OtlpError, ...
    ├── UnknownName               a pattern, tool, grader or task set no one registered; its
    │                             line lists the registered names and how to add one.
    └── Refusal (loopbench/harness/cli)     the line as ``loopbench`` prints it (a click exception).

    ModelError                    what the endpoint did: an HTTP error, a reply too large or
    │                             not a chat completion, a dropped connection, a timeout.
    │                             Recorded as the run's ``api_error`` with its usage, never a
    │                             crash, never graded.
    ├── ModelAPIError             a call that failed after any retries
    │                             (loopbench/harness/models/types.py)
    └── TransportFailure, ReplyTooLarge, BodyTooLarge, BodyUndecodable
                                  one attempt's failure, retried or turned into ModelAPIError.

    HarnessFault                  a bug or an internal signal in loopbench; inside a run it is
    │                             recorded as ``pattern_error``, outside one ``loopbench``
    │                             shows its traceback (a bug to report). The signals are
    │                             caught where they are meant to be, never said as such:
    ├── LimitReached              a run limit stopped a call (step_budget, token_budget,
    │                             step_timeout: the run's status, from
    │                             loopbench/harness/patterns/limits.py)
    ├── ToolFailure               a tool's failure, which the model reads as its result
    ├── GradedWrong, TooSlow      an answer a grader cannot tell right in time: graded wrong
    ├── SuiteFailure, Ended       signals of the sandbox's programs (loopbench/sandbox),
    │   NotPlainData, Gone        ending in the result of a run of model-written code: a
    │   ProtocolError             suite's check failed; the candidate's worker can answer no
    │   OutputLimit               more; a value cannot cross the pipe; the other process
    │                             ended, or broke the protocol; output past the limit
    └── ...                       a reader's fallback (columns_fill.Refused), a draft the task
                                  generator retries (DraftError), a plan step that refers to
                                  a failed one (rewoo.UnresolvedReference)

Anything else that escapes (a Python built-in such as KeyError) is a bug in loopbench too,
recorded as ``pattern_error`` when it happens inside a run.

The sandbox's programs (``loopbench.sandbox.isolation.PROGRAM_MODULES``: the candidate's
worker, the test runner and the modules they import) run in the sandboxed process with the
standard library and this module only (a copy of it is laid out beside them), so their
exceptions are in the tree too. Code of the candidate's or of a suite's that catches one
cannot change a run's verdict: the worker ends at the first write past the output limit,
and the test runner ends a test as the worker ended, or as failed past the output limit,
whatever the test did with the exception.
"""

from __future__ import annotations


class BadInput(ValueError):
    """What was given is wrong; the message says what, where, and what is expected."""


class UnknownName(BadInput):
    """A name that is not registered: a pattern, a tool, a grader, a task set."""


class ModelError(Exception):
    """A model call did not produce a response: what the endpoint did."""


class HarnessFault(Exception):
    """A bug or an internal signal in loopbench; inside a run it is recorded as
    ``pattern_error``."""


__all__ = ["BadInput", "HarnessFault", "ModelError", "UnknownName"]
