# Installs tests/terraform's npm dependencies (package-lock.json) when they are missing or stale.
# cmake -DNPM=/usr/bin/npm -DDIR=<tests/terraform> -P npm_ci.cmake
set(marker "${DIR}/node_modules/.package-lock.json")
if(EXISTS "${DIR}/node_modules/@cdktf/hcl2json/package.json" AND EXISTS "${marker}"
   AND NOT "${DIR}/package-lock.json" IS_NEWER_THAN "${marker}")
  message(STATUS "node_modules is up to date")
  return()
endif()
execute_process(COMMAND "${NPM}" ci --prefix "${DIR}" --no-audit --no-fund RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "npm ci --prefix ${DIR} failed (${rc}); it needs the npm registry once")
endif()
