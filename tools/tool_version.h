/*
 * tool_version.h — `--version` for every collie tool: "NAME (collie) VERSION", the version
 * of the library the tool is linked with.
 */
#ifndef COLLIE_TOOL_VERSION_H
#define COLLIE_TOOL_VERSION_H

#include <stdio.h>
#include <string.h>

#include "collie.h"

/* True (after printing the version) when the first argument is --version. */
static inline int tool_version_requested(int argc, char **argv, const char *name) {
    if (argc < 2 || strcmp(argv[1], "--version") != 0)
        return 0;
    printf("%s (collie) %s\n", name, collie_version());
    return 1;
}

#endif
