// chartcheck: the checks of `helm template` output that Helm itself does not make (tests/chart).
module cloneset.local/tools/chartcheck

go 1.24

require gopkg.in/yaml.v3 v3.0.1
