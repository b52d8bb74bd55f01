find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)              # module mode: Debian ships no protobuf CMake config
find_package(gRPC CONFIG REQUIRED)
find_package(absl CONFIG REQUIRED)
# No version: the package has no version file. Only prometheus-cpp::core is linked (the daemons serve /metrics with
# cpp-httplib, base/endpoints.h); the package's config still looks for civetweb, its pull library's server.
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(GTest CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(simdjson CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(benchmark CONFIG REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)  # CRD schema patterns and CEL matches() (devcluster/schema.h)
# The planner service's allocator: a plan of thousands of actions allocates and frees tens of thousands of small
# strings, where glibc malloc costs 2.4x the whole plan (docs/performance.md "The pod table").
pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
