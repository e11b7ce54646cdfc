# Embeds an HTML page in the binary, run at build time (CMakeLists.txt):
#   cmake -DPAGE=page.html -DPRELUDE=html_prelude.js -DVAR=name -DHEADER=dir/x.h
#         -DOUT_HTML=page.html -DOUT_C=page.c -P embed_page.cmake
# The page's one line /*@@PRELUDE@@*/ is replaced by the shared prelude
# (the script helpers both pages use); the assembled page is written to
# OUT_HTML and, as the bytes of `const char VAR[]` (NUL-terminated), to
# OUT_C. Bytes, not a string literal: nothing in the page needs escaping,
# and any host's CMake writes the same file (the arm64 cross build too).
cmake_minimum_required(VERSION 3.18) # new policies: no @VAR@ expansion in the marker
foreach(v PAGE PRELUDE VAR HEADER OUT_HTML OUT_C)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "embed_page.cmake: -D${v}=... missing")
  endif()
endforeach()
set(mark "/*@@PRELUDE@@*/\n")
file(READ "${PAGE}" page)
file(READ "${PRELUDE}" prelude)
string(FIND "${page}" "${mark}" first)
string(FIND "${page}" "${mark}" last REVERSE)
if(first EQUAL -1 OR NOT first EQUAL last)
  message(FATAL_ERROR "${PAGE}: needs exactly one line /*@@PRELUDE@@*/")
endif()
string(REPLACE "${mark}" "${prelude}" page "${page}")
file(WRITE "${OUT_HTML}.tmp" "${page}")
file(READ "${OUT_HTML}.tmp" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# 16 bytes a line (CMake's regular expressions have no {n}).
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n\t" bytes "${bytes}")
get_filename_component(page_name "${PAGE}" NAME)
get_filename_component(prelude_name "${PRELUDE}" NAME)
file(WRITE "${OUT_C}.tmp"
  "/* Generated from ${page_name} and ${prelude_name} by cmake/embed_page.cmake: do not edit. */\n"
  "#include \"${HEADER}\"\n\n"
  "const char ${VAR}[] = {\n\t${bytes}0x00\n};\n")
# Renamed into place whole: an interrupted build leaves no half page.
file(RENAME "${OUT_HTML}.tmp" "${OUT_HTML}")
file(RENAME "${OUT_C}.tmp" "${OUT_C}")
