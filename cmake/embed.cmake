# embed_json(target file...): builds a static library exposing each file's text as
#   std::string_view uringsim::data::<stem>()   (e.g. schema(), costs()).
function(embed_json target)
  set(gen_dir ${CMAKE_BINARY_DIR}/generated)
  set(sources)
  set(decls "")
  foreach(f ${ARGN})
    get_filename_component(stem ${f} NAME_WE)
    set(out ${gen_dir}/embedded_${stem}.cpp)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_SOURCE_DIR}/${f} -DOUT=${out} -DNAME=${stem}
              -P ${CMAKE_SOURCE_DIR}/cmake/embed_one.cmake
      DEPENDS ${CMAKE_SOURCE_DIR}/${f} ${CMAKE_SOURCE_DIR}/cmake/embed_one.cmake
      COMMENT "Embedding ${f}")
    list(APPEND sources ${out})
    string(APPEND decls "std::string_view ${stem}();\n")
  endforeach()
  file(WRITE ${gen_dir}/uringsim_data.hpp.in
    "#pragma once\n#include <string_view>\nnamespace uringsim::data {\n${decls}}\n")
  configure_file(${gen_dir}/uringsim_data.hpp.in ${gen_dir}/uringsim_data.hpp COPYONLY)
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC ${gen_dir})
endfunction()
