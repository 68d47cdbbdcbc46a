# The Objective-C++ half of the Metal runtime (docs/metal.md "Runtime on Apple"), added to
# libtessel_runtime on Apple platforms. Included by the root CMakeLists.txt inside if(APPLE),
# right after the tessel_runtime target is defined.
#
# Without Apple's Metal or Foundation framework the build goes on without it: libtessel_runtime
# keeps the platform-independent launch path, and a Metal launch says the runtime is not
# available.
#
# The .mm files are compiled with ARC (-fobjc-arc; in Objective-C++ clang then also turns on
# -fobjc-arc-exceptions, so C++ exceptions release what ARC holds). metal_apple.h refuses to
# compile without it.
include_guard(GLOBAL)

if(NOT TARGET tessel_runtime)
  message(FATAL_ERROR "cmake/TesselMetal.cmake must be included after the tessel_runtime target")
endif()

# The framework-context header, for adapters that are built later against an installed tessel
# (python/tessel/contrib/torch_mps compiles its provider against it on first use).
if(SKBUILD)
  install(FILES "${CMAKE_CURRENT_LIST_DIR}/../include/tessel/runtime/metal_context.h"
          DESTINATION tessel/include/tessel/runtime)
endif()

find_library(TESSEL_METAL_FRAMEWORK Metal)
find_library(TESSEL_FOUNDATION_FRAMEWORK Foundation)
if(NOT TESSEL_METAL_FRAMEWORK OR NOT TESSEL_FOUNDATION_FRAMEWORK)
  message(STATUS "tessel: Metal runtime OFF (Metal framework: '${TESSEL_METAL_FRAMEWORK}', "
                 "Foundation framework: '${TESSEL_FOUNDATION_FRAMEWORK}')")
  return()
endif()

enable_language(OBJCXX)

file(GLOB TESSEL_METAL_RUNTIME_SOURCES CONFIGURE_DEPENDS
  "${CMAKE_CURRENT_LIST_DIR}/../src/runtime/metal/*.mm")
target_sources(tessel_runtime PRIVATE ${TESSEL_METAL_RUNTIME_SOURCES})
set_source_files_properties(${TESSEL_METAL_RUNTIME_SOURCES} PROPERTIES
  COMPILE_OPTIONS "-fobjc-arc"
  COMPILE_DEFINITIONS TESSEL_HAVE_METAL_RUNTIME=1)
set_target_properties(tessel_runtime PROPERTIES
  OBJCXX_STANDARD 17 OBJCXX_STANDARD_REQUIRED ON OBJCXX_EXTENSIONS OFF)
if(CCACHE_PROGRAM)
  set_property(TARGET tessel_runtime PROPERTY OBJCXX_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
endif()
target_link_libraries(tessel_runtime PRIVATE "${TESSEL_METAL_FRAMEWORK}"
                                             "${TESSEL_FOUNDATION_FRAMEWORK}")
message(STATUS "tessel: Metal runtime ON (${TESSEL_METAL_FRAMEWORK})")
