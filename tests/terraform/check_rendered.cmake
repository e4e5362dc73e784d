# cmake -DDDL= -DNODE= -DCHECK= -DREFERENCE= -DSPEC= -DOUT= [-DMODULE_DIR=aws/terraform] -P check_rendered.cmake
# Renders SPEC with ddl into OUT and checks the rendered Terraform folder (MODULE_DIR inside the rendered
# files; openstack/terraform unless given) with check_module.mjs.
if(NOT MODULE_DIR)
  set(MODULE_DIR openstack/terraform)
endif()
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${DDL} --state-dir ${OUT}/no-state render ${SPEC} --out ${OUT}/rendered
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddl render ${SPEC} failed (${rc})")
endif()
execute_process(COMMAND ${NODE} ${CHECK} --reference ${REFERENCE} ${OUT}/rendered/${MODULE_DIR}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the rendered module fails the provider-argument check")
endif()
