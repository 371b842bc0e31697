"""CollieWork: the torch.distributed Work of a collective run by the collie backend.

It holds the collie.Request objects of the collective (split-phase: the operation runs as
the requests are tested or waited for, in start order) and what must happen once they are
all complete (a copy back into a non-contiguous tensor, AVG's division).

- wait(timeout=None): blocks until complete (a timedelta or milliseconds bounds the wait:
  CollieError COLLIE_TIMEOUT if it runs out; the work stays active and can be waited again).
- is_completed(): one bounded step of progress, then whether it is complete.
- get_future(): completes the work, then returns a torch.futures.Future already holding
  the result (the list of output tensors), or the error.  (DistributedDataParallel uses
  this: its buckets are reduced one after another, with no overlap of communication and
  the rest of the backward pass.)
- result(): the output tensors.
"""
import datetime
import time

import torch
import torch.distributed as dist

from .._errors import CollieError

_COLLIE_TIMEOUT = 1


def _milliseconds(timeout):
    """None for no bound (None, 0 or a zero timedelta: torch's kNoTimeout), else ms >= 0."""
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        ms = timeout.total_seconds() * 1000.0
    else:
        ms = float(timeout)
    return None if ms <= 0 else ms


class CollieWork(dist.Work):
    def __init__(self, requests, finish=(), result=None, what="collective"):
        super().__init__()
        self._requests = list(requests)
        self._finish = list(finish)
        self._result = result if result is not None else []
        self._what = what
        self._done = False
        self._error = None

    def _progress(self, timeout_ms):
        """True once complete; False if timeout_ms (None: no bound) ran out first."""
        if self._error is not None:
            raise self._error
        if self._done:
            return True
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        try:
            while self._requests:
                req = self._requests[0]
                if deadline is None:
                    req.wait()
                else:
                    left = max(0, int((deadline - time.monotonic()) * 1000.0))
                    if not req.test(timeout_ms=left):
                        return False
                self._requests.pop(0)
            for fn in self._finish:
                fn()
        except Exception as e:   # keep the first failure: later calls report it again
            self._error = e
            self._requests = []
            raise
        self._done = True
        return True

    def wait(self, timeout=None):
        ms = _milliseconds(timeout)
        if not self._progress(ms):
            raise CollieError("collie backend: %s did not complete within %.0f ms (the work "
                              "is still active)" % (self._what, ms), _COLLIE_TIMEOUT)
        return True

    def is_completed(self):
        try:
            return self._progress(0)
        except Exception:
            return True          # completed, with an error (exception() returns it)

    def is_success(self):
        return self.is_completed() and self._error is None

    def exception(self):
        return self._error

    def result(self):
        return self._result

    def get_future(self):
        fut = torch.futures.Future()
        try:
            self._progress(None)
        except Exception as e:
            fut.set_exception(e)
            return fut
        fut.set_result(self._result)
        return fut

    def __repr__(self):
        state = "failed" if self._error is not None else "done" if self._done else "active"
        return "<collie.torch.CollieWork %s, %s>" % (self._what, state)
