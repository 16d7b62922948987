# SPDX-License-Identifier: Apache-2.0
# The Debian package: `cmake -B build-deb -DCMAKE_INSTALL_PREFIX=/usr -DVFREADY_BUILD_TESTS=OFF
# -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build-deb && (cd build-deb && cpack -G DEB)`,
# as .ci/package does. docs/packaging.md says what is in it and why.
set(CPACK_PACKAGE_NAME vfready)
set(CPACK_PACKAGE_VENDOR "vfready")
set(CPACK_PACKAGE_CONTACT "vfready maintainers <maintainers@vfready.org>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "SR-IOV VF bring-up daemon for InfiniBand HCAs")
# The extended description (the summary above is its first line): under 80 columns.
# One string: a list of strings would be joined with ';', which would open every
# continuation line of the control file with " ;".
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
       "vfreadyd creates the SR-IOV virtual functions of NVIDIA/Mellanox\n"
       "InfiniBand HCAs at boot, gives them stable, fleet-unique GUIDs and\n"
       "persistent names, validates them and only then tells systemd it is\n"
       "ready, before kubelet starts; afterwards it repairs drift. vfreadyctl\n"
       "shows its status and renders device plugin configs from it.")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dependencies from the shared libraries linked
# The maintainer scripts call deb-systemd-helper and deb-systemd-invoke (with DPKG_ROOT).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "init-system-helpers (>= 1.54~)")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_LIST_DIR}/postinst ${CMAKE_CURRENT_LIST_DIR}/prerm ${CMAKE_CURRENT_LIST_DIR}/postrm
    ${CMAKE_CURRENT_LIST_DIR}/conffiles)
set(CPACK_GENERATOR DEB)

# What Debian wants in every package's doc directory: the copyright, and the changelog
# compressed without a timestamp.
set(_changelog ${CMAKE_CURRENT_BINARY_DIR}/package/changelog.gz)
add_custom_command(
  OUTPUT ${_changelog}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/package
  COMMAND sh -c "gzip -9n < \"$0\" > \"$1\"" ${CMAKE_CURRENT_LIST_DIR}/changelog ${_changelog}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/changelog
  VERBATIM)
add_custom_target(package_changelog ALL DEPENDS ${_changelog})
install(FILES ${_changelog} ${CMAKE_CURRENT_LIST_DIR}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

include(CPack)
