file(READ ${IN} content)
file(WRITE ${OUT} "#include <string_view>\nnamespace uringsim::data {\nstd::string_view ${NAME}() {\n  static const char text[] = R\"uringsim_embed(${content})uringsim_embed\";\n  return {text, sizeof(text) - 1};\n}\n}  // namespace uringsim::data\n")
