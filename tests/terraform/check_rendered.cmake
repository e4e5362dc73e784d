# cmake -DDDL= -DNODE= -DCHECK= -DREFERENCE= -DSPEC= -DOUT= -P check_rendered.cmake
# Renders SPEC with ddl into OUT and checks the rendered Terraform folder with check_module.mjs.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${DDL} --state-dir ${OUT}/no-state render ${SPEC} --out ${OUT}/rendered
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddl render ${SPEC} failed (${rc})")
endif()
execute_process(COMMAND ${NODE} ${CHECK} --reference ${REFERENCE} ${OUT}/rendered/openstack/terraform
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the rendered module fails the provider-argument check")
endif()
