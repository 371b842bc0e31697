/*
 * mpi_progress_io.c — MPI-IO's calls that are collective over the file's communicator,
 * passed to the MPI underneath while collie's requests keep moving, as in
 * mpi_progress_ctor.c: with active collie requests each runs between cm_help_begin and
 * cm_help_end (mpi_progress_help.c: a helper thread runs collie's side while this thread
 * is inside PMPI); with none, one counter test, then the PMPI call.  A rank writing a
 * checkpoint with MPI_File_write_at_all while a peer waits in MPI_Wait for an allreduce
 * this rank started would otherwise deadlock.
 *
 * Covered: MPI_File_open, _close, _set_view, _set_size, _preallocate, _sync, _set_info,
 * _set_atomicity, _seek_shared; _read/_write_all, _at_all, _ordered and their split
 * _begin/_end forms.  Not covered: the independent calls (they wait for no peer) and MPI-4's
 * large-count _c forms.  ROMIO (MPICH; Open MPI's romio321) calls some MPI_File_* and
 * MPI_Win_* names itself, so a helped call may nest: the helper stays on until the
 * outermost returns.
 */
#include "mpi/mpi_layer.h"

/* ---- opening, closing, the view and the file's state ------------------------------------- */

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_open(comm, filename, amode, info, fh));
}

int MPI_File_close(MPI_File *fh) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_close(fh));
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_set_view(fh, disp, etype, filetype, datarep, info));
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_set_size(fh, size));
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_preallocate(fh, size));
}

int MPI_File_sync(MPI_File fh) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_sync(fh));
}

int MPI_File_set_info(MPI_File fh, MPI_Info info) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_set_info(fh, info));
}

int MPI_File_set_atomicity(MPI_File fh, int flag) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_set_atomicity(fh, flag));
}

int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_seek_shared(fh, offset, whence));
}


/* ---- the collective data access calls ---------------------------------------------------- */

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status
                      *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_read_all(fh, buf, count, datatype, status));
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_write_all(fh, buf, count, datatype, status));
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype
                         datatype, MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_read_at_all(fh, offset, buf, count, datatype, status));
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_write_at_all(fh, offset, buf, count, datatype, status));
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status
                          *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_read_ordered(fh, buf, count, datatype, status));
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_write_ordered(fh, buf, count, datatype, status));
}


/* ---- split collective data access (a begin call may block: ROMIO does the I/O there) ---- */

int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_read_all_begin(fh, buf, count, datatype));
}

int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_read_all_end(fh, buf, status));
}

int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_write_all_begin(fh, buf, count, datatype));
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_write_all_end(fh, buf, status));
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                               MPI_Datatype datatype) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_read_at_all_begin(fh, offset, buf, count, datatype));
}

int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_read_at_all_end(fh, buf, status));
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                MPI_Datatype datatype) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_write_at_all_begin(fh, offset, buf, count, datatype));
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_write_at_all_end(fh, buf, status));
}

int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_read_ordered_begin(fh, buf, count, datatype));
}

int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_read_ordered_end(fh, buf, status));
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_write_ordered_begin(fh, buf, count, datatype));
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status) {
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_File_write_ordered_end(fh, buf, status));
}
