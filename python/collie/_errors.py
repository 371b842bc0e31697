"""collie.CollieError: a failed collie call, with the C library's message and status."""

_NAMES = {
    1: "COLLIE_TIMEOUT", -1: "COLLIE_ERR_ARG", -2: "COLLIE_ERR_NOMEM", -3: "COLLIE_ERR_PEER",
    -4: "COLLIE_ERR_MISMATCH", -5: "COLLIE_ERR_UNSUPPORTED", -6: "COLLIE_ERR_TRANSPORT",
    -7: "COLLIE_ERR_INTERNAL",
}


def status_name(status):
    return _NAMES.get(status, "status %d" % status)


class CollieError(RuntimeError):
    """A collie call failed.  ``status`` is the C status (negative, e.g. -1 for a bad
    argument); ``status_name`` its name; str(e) the library's message."""

    def __init__(self, message, status=-7):
        super().__init__(message)
        self.status = status

    @property
    def status_name(self):
        return status_name(self.status)
