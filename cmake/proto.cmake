# cloneset_proto_library(<target> <file.proto> <include-prefix>)
# Generates C++ and gRPC stubs into ${CMAKE_BINARY_DIR}/gen/<include-prefix>/ so that code includes
# "<include-prefix>/<file>.pb.h". Generated code is compiled once in its own static library.
set(CLONESET_GEN_DIR ${CMAKE_BINARY_DIR}/gen)
function(cloneset_proto_library target proto prefix)
  get_filename_component(abs ${proto} ABSOLUTE)
  get_filename_component(dir ${abs} DIRECTORY)
  get_filename_component(base ${proto} NAME_WE)
  set(out ${CLONESET_GEN_DIR}/${prefix})
  file(MAKE_DIRECTORY ${out})
  set(srcs ${out}/${base}.pb.cc ${out}/${base}.grpc.pb.cc)
  set(hdrs ${out}/${base}.pb.h ${out}/${base}.grpc.pb.h)
  add_custom_command(
    OUTPUT ${srcs} ${hdrs}
    COMMAND protobuf::protoc --proto_path=${dir} --proto_path=/usr/include --cpp_out=${out} --grpc_out=${out}
            --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin> ${abs}
    DEPENDS ${abs} protobuf::protoc gRPC::grpc_cpp_plugin
    COMMENT "protoc ${proto}" VERBATIM)
  add_library(${target} STATIC ${srcs} ${hdrs})
  target_include_directories(${target} PUBLIC ${CLONESET_GEN_DIR})
  target_link_libraries(${target} PUBLIC gRPC::grpc++ protobuf::libprotobuf)
endfunction()

# cloneset_test_executable(<name> sources... DEPS ...): a GoogleTest binary in build/tests, not registered with ctest
# (cloneset_test registers each of its tests; cloneset_e2e_real_only, tests/support, the binary once for real).
function(cloneset_test_executable name)
  cmake_parse_arguments(T "" "" "DEPS" ${ARGN})
  add_executable(${name} ${T_UNPARSED_ARGUMENTS})
  target_compile_options(${name} PRIVATE ${CLONESET_WARNINGS})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gmock GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
endfunction()

# cloneset_test(<name> SOURCES ... DEPS ...): a GoogleTest binary registered with ctest.
function(cloneset_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  cloneset_test_executable(${name} ${T_SOURCES} DEPS ${T_DEPS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES TIMEOUT ${T_TIMEOUT})
  # Labels are set by a script that ctest runs after the discovered tests are defined: passed through
  # gtest_discover_tests' PROPERTIES, a list of labels is flattened and every label after the first is lost.
  if(T_LABELS)
    set(labels_script "${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake")
    file(WRITE "${labels_script}"
      "if(DEFINED ${name}_TESTS)\n  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${T_LABELS}\")\nendif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_script}")
  endif()
endfunction()
