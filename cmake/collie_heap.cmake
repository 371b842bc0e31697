# libcollie_heap.so (src/heap/): the opt-in shared heap, LD_PRELOAD'ed into ranks by
# `collie-run --shared-heap` (or by hand for MPI programs).  Not linked to libcollie: collie
# finds its collie_heap_lookup with dlsym.  Only malloc & co. and that function are exported.
add_library(collie_heap SHARED ${CMAKE_SOURCE_DIR}/src/heap/arena.c
                               ${CMAKE_SOURCE_DIR}/src/heap/interpose.c)
target_include_directories(collie_heap PRIVATE ${CMAKE_SOURCE_DIR}/src)
set_target_properties(collie_heap PROPERTIES C_VISIBILITY_PRESET hidden)
# The allocator's own functions must never be turned into calls of each other.
target_compile_options(collie_heap PRIVATE -fno-builtin-malloc -fno-builtin-calloc
  -fno-builtin-realloc -fno-builtin-free)
target_link_libraries(collie_heap PRIVATE ${CMAKE_DL_LIBS} pthread)
install(TARGETS collie_heap LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# collie-run looks for it next to itself, then in ../<libdir>.
target_compile_definitions(collie-run PRIVATE COLLIE_RUN_LIBDIR="${CMAKE_INSTALL_LIBDIR}")
