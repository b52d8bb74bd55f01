# What ships and what does not, as CMake install components (docs/architecture.md, "What ships"):
#   product: the three services, the CLI and the Helm chart: `cmake --install BUILD --component product`.
#   dev:     the embedded development cluster, its simulated container runtime, the demo (cloneset-demo) and the
#            benchmarks: tooling for development and tests, never deployed.
# tests/layout/install_components_test.sh installs both and checks each holds exactly its part.
include(GNUInstallDirs)

set(CLONESET_PRODUCT_PROGRAMS cloneset-planner cloneset-executor cloneset-agent clonesetctl)
set(CLONESET_DEV_PROGRAMS cloneset-devcluster cloneset-sim-cri cloneset-demo)
set(CLONESET_DEV_BENCHMARKS planner_bench planner_bench_glibc planner_api_example devcluster_bench
    kube_watch_stream_bench reconcile_bench)

foreach(program ${CLONESET_PRODUCT_PROGRAMS} ${CLONESET_DEV_PROGRAMS})
  if(NOT TARGET ${program})
    message(FATAL_ERROR "install: no target ${program}; cmake/install.cmake lists what ships")
  endif()
endforeach()
install(TARGETS ${CLONESET_PRODUCT_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT product)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/charts/cloneset DESTINATION ${CMAKE_INSTALL_DATADIR}/cloneset/charts
        COMPONENT product)

install(TARGETS ${CLONESET_DEV_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)
# Benchmarks are optional targets (some need libraries a build may lack): those that exist go with the tooling.
foreach(bench ${CLONESET_DEV_BENCHMARKS})
  if(TARGET ${bench})
    install(TARGETS ${bench} RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cloneset/bench COMPONENT dev)
  endif()
endforeach()
