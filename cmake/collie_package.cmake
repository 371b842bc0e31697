# What `cmake --install build --prefix DIR` writes for programs that use collie, all of it
# relocatable (valid in whatever prefix it is installed or moved to):
#   DIR/<libdir>/pkgconfig/collie.pc                 pkg-config --cflags --libs collie
#   DIR/<libdir>/pkgconfig/collie_mpi-<flavour>.pc   libcollie_mpi of that MPI flavour
#   DIR/<libdir>/cmake/collie/                       find_package(collie): collie::collie,
#       collie::collie_static, collie::collie_mpi_<flavour> for each flavour built, and
#       collie::collie_mpi (the flavour named by COLLIE_MPI_FLAVOUR, default the first built)
include(CMakePackageConfigHelpers)

# pkg-config: the prefix relative to the .pc file's own directory (${pcfiledir}).
set(COLLIE_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(COLLIE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH rel "/prefix/${COLLIE_PC_DIR}" "/prefix")
  string(REGEX REPLACE "/$" "" rel "${rel}")
  set(COLLIE_PC_PREFIX "\${pcfiledir}/${rel}")
endif()
configure_file(${CMAKE_SOURCE_DIR}/collie.pc.in ${CMAKE_BINARY_DIR}/collie.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/collie.pc DESTINATION ${COLLIE_PC_DIR})
set(pc_flavours ${COLLIE_MPI_FLAVOURS})
if(COLLIE_MPI_ABI)
  list(APPEND pc_flavours abi)   # the MPI-5 standard ABI (cmake/collie_mpi.cmake)
endif()
foreach(COLLIE_PC_FLAVOUR ${pc_flavours})
  set(COLLIE_PC_MPICC mpicc.${COLLIE_PC_FLAVOUR})
  if(COLLIE_PC_FLAVOUR STREQUAL "abi")
    set(COLLIE_PC_MPICC mpicc_abi)
  endif()
  configure_file(${CMAKE_SOURCE_DIR}/cmake/collie_mpi.pc.in
                 ${CMAKE_BINARY_DIR}/collie_mpi-${COLLIE_PC_FLAVOUR}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/collie_mpi-${COLLIE_PC_FLAVOUR}.pc DESTINATION ${COLLIE_PC_DIR})
endforeach()

# CMake package.
set(COLLIE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/collie)
install(EXPORT collieTargets NAMESPACE collie:: DESTINATION ${COLLIE_CMAKE_DIR})
set(COLLIE_BUILT_MPI_FLAVOURS "${pc_flavours}")
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/collieConfig.cmake.in
  ${CMAKE_BINARY_DIR}/collieConfig.cmake INSTALL_DESTINATION ${COLLIE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/collieConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/collieConfig.cmake ${CMAKE_BINARY_DIR}/collieConfigVersion.cmake
  DESTINATION ${COLLIE_CMAKE_DIR})
