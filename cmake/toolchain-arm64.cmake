# Cross-compiling ebpf-prof for arm64 (Jetson boards) on a Debian amd64
# machine with Debian's multiarch packages (tools/cross-build.sh installs
# them): gcc-aarch64-linux-gnu and the :arm64 -dev libraries.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
# pkg-config must see the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
# ctest runs the cross-built unit tests through qemu-user (Debian's
# qemu-user package); the arm64 libraries come from the multiarch paths.
find_program(EP_QEMU_AARCH64 qemu-aarch64)
if(EP_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EP_QEMU_AARCH64})
endif()
