"""Progress under --batch: each batch said as it is submitted and done, and the batches
pending with the age of the oldest, in the plain lines and the live view."""

from loopbench.harness.cli.progress import Progress
from loopbench.harness.cli.progress_view import frame
from loopbench.harness.models.pending_batches import PendingBatches
from tests.harness.cli.test_progress import Clock, record, terminal


def test_batches_are_said_as_they_go_and_the_pending_ones_shown_with_their_age(capsys):
    clock = Clock()
    batches = PendingBatches(clock)
    with Progress(True, clock=clock, batches=batches) as progress:
        progress.started(2, 0)
        batches.submitted("batch_1", 16)
        batches.submitted("batch_2", 1, resumed=True)
        clock.now = 192
        progress.recorded(record())
        batches.done("batch_1", "completed")
    batches.submitted("batch_3", 4)  # after the command: no longer listened to
    err = capsys.readouterr().err
    assert "batch batch_1 submitted: 16 requests" in err
    assert "batch batch_2 resumed from the journal: 1 request\n" in err
    assert "1/2 runs" in err and "; 2 batches pending (17 requests), the oldest 0:03:12" in err
    assert "batch batch_1 completed after 0:03:12" in err
    assert "batch_3" not in err


def test_the_live_view_shows_the_batches_pending():
    clock = Clock()
    batches = PendingBatches(clock)
    batches.submitted("batch_1", 5)
    clock.now = 61
    progress = Progress(False, console=terminal(), clock=clock, batches=batches)
    progress.started(5, 0)
    console = terminal()
    console.print(frame(progress.counts, 1.0, batches.summary()))
    progress.close()
    assert "1 batch pending (5 requests), the oldest 0:01:01" in console.file.getvalue()
    assert batches.summary() and not PendingBatches().summary()
