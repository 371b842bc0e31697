# libcollie_mpi for each MPI flavour found (Open MPI: mpicc.openmpi, MPICH: mpicc.mpich):
# build/lib/<flavour>/libcollie_mpi.so = collie + the PMPI layer of src/mpi (the Open MPI
# build linked to libmpi.so.40; the MPICH-ABI build to no MPI library: see below).  Each ABI
# needs its own build.  A missing flavour is skipped with a message.
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
  foreach(w ${words})
    if(w MATCHES "^-I(.+)")
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
endfunction()

function(collie_mpi_executable name flavour)
  add_executable(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${COLLIE_MPI_${flavour}_INCLUDES}
    ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(${name} PRIVATE ${COLLIE_MPI_${flavour}_LIBS} m)
  # gcc 12 takes MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) for an empty array.
  target_compile_options(${name} PRIVATE -Wno-stringop-overflow)
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
  set(t collie_mpi_${flavour})
  add_library(${t} SHARED $<TARGET_OBJECTS:collie_objects> ${COLLIE_MPI_LAYER_SOURCES})
  target_include_directories(${t} PRIVATE ${COLLIE_MPI_${flavour}_INCLUDES}
    ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
  target_include_directories(${t} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # One build per MPI ABI.  MPICH's ABI (Debian's libmpich.so.12, MPICH 5's and Intel MPI's
  # libmpi.so.12): the MPI symbols (functions only: MPICH's handles are integer constants)
  # stay undefined and bind to the program's MPI library, so the preload serves every
  # implementation of the ABI with one MPI library in the process.  Open MPI (4.1 and 5.0:
  # libmpi.so.40, whose handles are addresses of data symbols) is linked as before.
  set(mpilibs ${COLLIE_MPI_${flavour}_LIBS})
  if(flavour STREQUAL "mpich")
    set(mpilibs "")
  endif()
  target_link_libraries(${t} PRIVATE ${mpilibs} ${COLLIE_LIBS})
  # the layer calls its own functions directly (inlined where short): a thinner layer
  target_compile_options(${t} PRIVATE -fno-semantic-interposition)
  set_target_properties(${t} PROPERTIES OUTPUT_NAME collie_mpi
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/${flavour})
  install(TARGETS ${t} EXPORT collieTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/${flavour})
endforeach()
install(FILES include/collie_mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
message(STATUS "collie: libcollie_mpi for: ${COLLIE_MPI_FLAVOURS}")
