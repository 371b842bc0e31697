/*
 * team_split.c — collie.Team's sub-teams (collie_team_split / dup / free):
 *   split(color, key=0) -> a new Team, or None for a negative color or None
 *   dup()               -> a new Team of the same ranks
 *   free()              -> frees a team made by split() or dup(); the world is refused
 *   with team: ...      -> free() at the end of the block
 * Collective over the team, like every collective: every rank makes the same call.  A
 * sub-team not freed is freed by collie.finalize() (never by the garbage collector: a
 * free is collective and ranks collect garbage at different times).
 */
#include <limits.h>

#include "call.h"

/* An int argument of C range; -1 with an error set. */
static int int_arg(PyObject *o, const char *fn, const char *name, int *out) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < INT_MIN || v > INT_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s: %s %ld does not fit a C int", fn, name, v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* The new team as a Team object (None for NULL). */
static PyObject *wrap(collie_team_t *nt) {
    if (!nt)
        Py_RETURN_NONE;
    PyObject *o = pyc_team_new(nt);
    if (o)
        ((pyc_team *)o)->sub = 1;
    return o;
}

PyObject *pyc_team_split(pyc_team *t, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
    static const char *const names[] = { "color", "key" };
    PyObject *v[2];
    int color = COLLIE_UNDEFINED, key = 0;
    if (pyc_parse("split", args, nargs, kwnames, names, 2, 1, v) || pyc_reentered("split") ||
        !pyc_team_live(t, "split"))
        return NULL;
    if (v[0] != Py_None && int_arg(v[0], "split", "color", &color))
        return NULL;
    if (v[1] && int_arg(v[1], "split", "key", &key))
        return NULL;
    collie_team_t *nt = NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS
    pyc_lock();
    st = capi.team_split(t->team, color < 0 ? COLLIE_UNDEFINED : color, key, &nt);
    pyc_unlock();
    Py_END_ALLOW_THREADS
    return st ? pyc_raise_status(st) : wrap(nt);
}

PyObject *pyc_team_dup(pyc_team *t, PyObject *unused) {
    if (pyc_reentered("dup") || !pyc_team_live(t, "dup"))
        return NULL;
    collie_team_t *nt = NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS
    pyc_lock();
    st = capi.team_dup(t->team, &nt);
    pyc_unlock();
    Py_END_ALLOW_THREADS
    return st ? pyc_raise_status(st) : wrap(nt);
}

PyObject *pyc_team_free(pyc_team *t, PyObject *unused) {
    if (pyc_reentered("free") || !pyc_team_live(t, "free"))
        return NULL;
    collie_team_t *team = t->team;
    int st;
    Py_BEGIN_ALLOW_THREADS
    pyc_lock();
    st = capi.team_free(&team);   /* the library refuses the world and busy teams */
    pyc_unlock();
    Py_END_ALLOW_THREADS
    if (st)
        return pyc_raise_status(st);
    t->team = NULL;
    Py_RETURN_NONE;
}

PyObject *pyc_team_enter(pyc_team *t, PyObject *unused) {
    if (!pyc_team_live(t, "with"))
        return NULL;
    return Py_NewRef((PyObject *)t);
}

/* Frees the team unless the block freed it already (or collie.finalize() did). */
PyObject *pyc_team_exit(pyc_team *t, PyObject *const *args, Py_ssize_t nargs) {
    if (!t->team || t->generation != pyc_generation)
        Py_RETURN_FALSE;
    PyObject *r = pyc_team_free(t, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}
