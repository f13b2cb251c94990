# find_package(attn): the attn::attn target, the installed header's directory and libm. Installed in
# PREFIX/share/cmake/attn by `make install` or `cmake --install`.
get_filename_component(_attn_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET attn::attn)
  add_library(attn::attn INTERFACE IMPORTED)
  set_target_properties(attn::attn PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_attn_prefix}/include")
  if(NOT WIN32)
    set_property(TARGET attn::attn PROPERTY INTERFACE_LINK_LIBRARIES m)
  endif()
endif()
unset(_attn_prefix)
