# SPDX-License-Identifier: Apache-2.0
# fish completion for vfreadyctl; installed to /usr/share/fish/vendor_completions.d/.

set -l vfreadyctl_commands status describe wait reconcile reload render
set -l vfreadyctl_targets sriov-device-plugin rdma-shared-device-plugin sriov-network-node-policy

# The PCI addresses and names `describe` accepts, from the PF entries (indented four
# spaces; their VFs' keys are deeper) of `vfreadyctl status -o yaml`; nothing when
# vfreadyd does not answer within 3 s.
function __vfreadyctl_pfs
    set -l bus
    set -l tokens (commandline -opc)
    if set -l i (contains -i -- --bus-address $tokens)
        set bus --bus-address $tokens[(math $i + 1)]
    end
    timeout 3 vfreadyctl $bus status -o yaml 2>/dev/null |
        sed -n -E 's/^    (pci|name|configured_name|kernel_name): "([^"\\\\]*)"$/\2/p' | sort -u
end

complete -c vfreadyctl -f
complete -c vfreadyctl -s h -l help -d 'Show the commands, options and exit codes'
complete -c vfreadyctl -l version -d 'Show the version'
complete -c vfreadyctl -l bus-address -x -d 'D-Bus address of vfreadyd'
complete -c vfreadyctl -l status-file -r -F -d 'Status file read when vfreadyd is not running'
complete -c vfreadyctl -l no-color -d 'No colours, even on a terminal'

set -l vfreadyctl_descriptions 'One line per PF: state, VFs, names, problems' \
    'One PF with its steps and VFs' 'Wait until the node is ready' \
    'Bring every PF to its target again (root)' 'Re-read the configuration (root)' \
    "Print a cluster agent's config"
for i in (seq (count $vfreadyctl_commands))
    complete -c vfreadyctl -n "not __fish_seen_subcommand_from $vfreadyctl_commands" \
        -a $vfreadyctl_commands[$i] -d $vfreadyctl_descriptions[$i]
end

complete -c vfreadyctl -n '__fish_seen_subcommand_from status' -l vfs -d "Each VF's line too"
complete -c vfreadyctl -n '__fish_seen_subcommand_from status describe' -l json -d 'As JSON'
complete -c vfreadyctl -n '__fish_seen_subcommand_from status describe' -s o -l output -x \
    -a 'table json yaml' -d 'Output format'
complete -c vfreadyctl -n '__fish_seen_subcommand_from describe' -a '(__vfreadyctl_pfs)' \
    -d PF
complete -c vfreadyctl -n '__fish_seen_subcommand_from wait reconcile reload' -l timeout -x \
    -d 'Seconds to wait'
complete -c vfreadyctl -n '__fish_seen_subcommand_from reconcile reload' -l wait \
    -d "Wait for the pass's outcome"
complete -c vfreadyctl -n "__fish_seen_subcommand_from render; and not __fish_seen_subcommand_from $vfreadyctl_targets" \
    -a "$vfreadyctl_targets"
complete -c vfreadyctl -n '__fish_seen_subcommand_from render' -l resource-name -x \
    -d 'Kubernetes resource name'
complete -c vfreadyctl -n '__fish_seen_subcommand_from render' -l resource-prefix -x \
    -d 'Resource prefix'
complete -c vfreadyctl -n '__fish_seen_subcommand_from render' -l namespace -x -d Namespace
complete -c vfreadyctl -n '__fish_seen_subcommand_from render' -l configmap -x \
    -d "Wrap the config in a ConfigMap of this name"
