# Embeds an HTML page in the binary, run at build time (CMakeLists.txt):
#   cmake -DPAGE=page.html -DPRELUDE=html_prelude.js -DSTYLE=html_prelude.css
#         -DVAR=name -DHEADER=dir/x.h -DOUT_HTML=page.html -DOUT_C=page.c
#         -P embed_page.cmake
# The page's one line /*@@PRELUDE@@*/ is replaced by the shared prelude
# (the script helpers both pages use), its one line /*@@STYLE@@*/ by the
# shared style sheet (the look both pages share); the assembled page is written to
# OUT_HTML and, as the bytes of `const char VAR[]` (NUL-terminated), to
# OUT_C. Bytes, not a string literal: nothing in the page needs escaping,
# and any host's CMake writes the same file (the arm64 cross build too).
cmake_minimum_required(VERSION 3.18) # new policies: no @VAR@ expansion in the marker
foreach(v PAGE PRELUDE STYLE VAR HEADER OUT_HTML OUT_C)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "embed_page.cmake: -D${v}=... missing")
  endif()
endforeach()
file(READ "${PAGE}" page)
foreach(part PRELUDE STYLE)
  set(mark "/*@@${part}@@*/\n")
  file(READ "${${part}}" text)
  string(FIND "${page}" "${mark}" first)
  string(FIND "${page}" "${mark}" last REVERSE)
  if(first EQUAL -1 OR NOT first EQUAL last)
    message(FATAL_ERROR "${PAGE}: needs exactly one line /*@@${part}@@*/")
  endif()
  string(REPLACE "${mark}" "${text}" page "${page}")
endforeach()
file(WRITE "${OUT_HTML}.tmp" "${page}")
file(READ "${OUT_HTML}.tmp" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# 16 bytes a line (CMake's regular expressions have no {n}).
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n\t" bytes "${bytes}")
get_filename_component(page_name "${PAGE}" NAME)
get_filename_component(prelude_name "${PRELUDE}" NAME)
get_filename_component(style_name "${STYLE}" NAME)
file(WRITE "${OUT_C}.tmp"
  "/* Generated from ${page_name}, ${prelude_name} and ${style_name} by cmake/embed_page.cmake: do not edit. */\n"
  "#include \"${HEADER}\"\n\n"
  "const char ${VAR}[] = {\n\t${bytes}0x00\n};\n")
# Renamed into place whole: an interrupted build leaves no half page.
file(RENAME "${OUT_HTML}.tmp" "${OUT_HTML}")
file(RENAME "${OUT_C}.tmp" "${OUT_C}")
