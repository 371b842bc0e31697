# libcollie_mpi for each MPI flavour found (Open MPI: mpicc.openmpi, MPICH: mpicc.mpich):
# build/lib/<flavour>/libcollie_mpi.so = collie + the PMPI layer of src/mpi (the Open MPI
# build linked to libmpi.so.40; the MPICH-ABI build to no MPI library: see below).  Each ABI
# needs its own build.  A missing flavour is skipped with a message.  The MPI-5 standard
# ABI (flavour "abi", below the loop) is built where an MPI offers it; it is not in
# COLLIE_MPI_FLAVOURS (no mpirun.abi): COLLIE_MPI_ABI says whether it was built.
# collie_mpi_executable(NAME FLAVOUR SOURCES...) builds an MPI program for a flavour.
set(COLLIE_MPI_FLAVOURS "")
file(GLOB COLLIE_MPI_LAYER_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/mpi/*.c)

function(collie_mpi_flags flavour mpicc)
  execute_process(COMMAND ${mpicc} -show OUTPUT_VARIABLE line RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(COLLIE_MPI_${flavour}_OK FALSE PARENT_SCOPE)
    return()
  endif()
  separate_arguments(words UNIX_COMMAND "${line}")
  set(incs "")
  set(libs "")
  set(defs "")
  set(rpath FALSE)
  foreach(w ${words})
    if(rpath AND w MATCHES "^-Wl,(.+)")   # mpicc_abi: -Wl,-rpath -Wl,DIR (one flag here)
      list(APPEND libs "-Wl,-rpath,${CMAKE_MATCH_1}")
      set(rpath FALSE)
    elseif(w STREQUAL "-Wl,-rpath")
      set(rpath TRUE)
    elseif(w MATCHES "^-Wl,")
      list(APPEND libs ${w})
    elseif(w MATCHES "^-D(.+)")
      list(APPEND defs ${CMAKE_MATCH_1})
    elseif(w MATCHES "^-I(.+)")
      list(APPEND incs ${CMAKE_MATCH_1})
    elseif(w MATCHES "^-L(.+)")
      list(APPEND libs "-L${CMAKE_MATCH_1}")
    elseif(w MATCHES "^-l(.+)")
      list(APPEND libs "-l${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(COLLIE_MPI_${flavour}_OK TRUE PARENT_SCOPE)
  set(COLLIE_MPI_${flavour}_INCLUDES "${incs}" PARENT_SCOPE)
  set(COLLIE_MPI_${flavour}_LIBS "${libs}" PARENT_SCOPE)
  set(COLLIE_MPI_${flavour}_DEFINES "${defs}" PARENT_SCOPE)
endfunction()

function(collie_mpi_executable name flavour)
  add_executable(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${COLLIE_MPI_${flavour}_INCLUDES}
    ${CMAKE_SOURCE_DIR}/include)
  target_compile_definitions(${name} PRIVATE ${COLLIE_MPI_${flavour}_DEFINES})
  target_link_libraries(${name} PRIVATE ${COLLIE_MPI_${flavour}_LIBS} m)
  # gcc 12 takes MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) for an empty array.
  target_compile_options(${name} PRIVATE -Wno-stringop-overflow)
endfunction()

function(collie_mpi_library flavour)
  set(t collie_mpi_${flavour})
  add_library(${t} SHARED $<TARGET_OBJECTS:collie_objects> ${COLLIE_MPI_LAYER_SOURCES})
  target_include_directories(${t} PRIVATE ${COLLIE_MPI_${flavour}_INCLUDES}
    ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
  target_compile_definitions(${t} PRIVATE ${COLLIE_MPI_${flavour}_DEFINES})
  target_include_directories(${t} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # One build per MPI ABI.  MPICH's ABI (Debian's libmpich.so.12, MPICH 5's and Intel MPI's
  # libmpi.so.12): the MPI symbols (functions only: MPICH's handles are integer constants)
  # stay undefined and bind to the program's MPI library, so the preload serves every
  # implementation of the ABI with one MPI library in the process.  Open MPI (4.1 and 5.0:
  # libmpi.so.40, whose handles are addresses of data symbols) is linked as before.
  set(mpilibs ${COLLIE_MPI_${flavour}_LIBS})
  if(flavour STREQUAL "mpich" OR flavour STREQUAL "abi")
    set(mpilibs "")
  endif()
  target_link_libraries(${t} PRIVATE ${mpilibs} ${COLLIE_LIBS})
  # the layer calls its own functions directly (inlined where short): a thinner layer
  target_compile_options(${t} PRIVATE -fno-semantic-interposition)
  set_target_properties(${t} PROPERTIES OUTPUT_NAME collie_mpi
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/${flavour})
  install(TARGETS ${t} EXPORT collieTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/${flavour})
endfunction()

foreach(flavour openmpi mpich)
  find_program(COLLIE_MPICC_${flavour} mpicc.${flavour})
  find_program(COLLIE_MPIRUN_${flavour} mpirun.${flavour})
  if(NOT COLLIE_MPICC_${flavour} OR NOT COLLIE_MPIRUN_${flavour})
    message(STATUS "collie: ${flavour} not found (mpicc.${flavour}, mpirun.${flavour}): "
                   "no libcollie_mpi for ${flavour} (scripts/setup.sh installs it)")
    continue()
  endif()
  collie_mpi_flags(${flavour} ${COLLIE_MPICC_${flavour}})
  if(NOT COLLIE_MPI_${flavour}_OK)
    message(STATUS "collie: ${COLLIE_MPICC_${flavour}} -show failed: no libcollie_mpi for ${flavour}")
    continue()
  endif()
  list(APPEND COLLIE_MPI_FLAVOURS ${flavour})
  collie_mpi_library(${flavour})
endforeach()

# The MPI-5 standard ABI (mpi_abi.h, libmpi_abi.so.1): handles are pointers to incomplete
# structs, the predefined ones small integer constants, the same in every implementation.
# Compiled with the flags of mpicc_abi -show (MPICH 5 ships it; scripts/setup.sh puts MPICH
# 5.0.2 from PyPI into COLLIE_MPI_ABI_ROOT) and linked to no MPI library, like the MPICH-ABI
# build: one file for every MPI that implements the standard ABI.
set(root "$ENV{COLLIE_MPI_ABI_ROOT}")
if(NOT root)
  set(root "$ENV{HOME}/.cache/collie-mpi-abi")
endif()
set(COLLIE_MPI_ABI_ROOT "${root}" CACHE PATH
    "where to look for mpicc_abi and mpiexec of an MPI with the MPI-5 standard ABI (bin/)")
find_program(COLLIE_MPICC_abi mpicc_abi HINTS ${COLLIE_MPI_ABI_ROOT}/bin)
set(COLLIE_MPI_ABI FALSE)
if(COLLIE_MPICC_abi)
  collie_mpi_flags(abi ${COLLIE_MPICC_abi})
endif()
if(COLLIE_MPI_abi_OK)
  get_filename_component(dir ${COLLIE_MPICC_abi} DIRECTORY)
  set(COLLIE_MPIEXEC_abi ${dir}/mpiexec)   # the same MPI's launcher, for the tests
  set(COLLIE_MPI_ABI TRUE)
  collie_mpi_library(abi)
  message(STATUS "collie: libcollie_mpi for the MPI-5 standard ABI (${COLLIE_MPICC_abi})")
else()
  message(STATUS "collie: no mpicc_abi (MPI-5 standard ABI) in PATH or ${COLLIE_MPI_ABI_ROOT}/bin: "
                 "no libcollie_mpi for it (WITH_MPI=1 scripts/setup.sh installs MPICH 5 there)")
endif()
install(FILES include/collie_mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
message(STATUS "collie: libcollie_mpi for: ${COLLIE_MPI_FLAVOURS}")
