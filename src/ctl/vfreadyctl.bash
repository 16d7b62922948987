# SPDX-License-Identifier: Apache-2.0
# bash completion for vfreadyctl; installed to /usr/share/bash-completion/completions/.
# Plain bash and grep: it needs neither the bash-completion package's helpers nor
# python3 or jq, and fails silently.

# The PCI addresses and names of the PFs (`pfs[].pci`, `pfs[].name`, and the
# `configured_name` and `kernel_name` that `describe` accepts as well) that
# `vfreadyctl status --json` lists, pretty-printed or not (it may come from the status
# file). grep cuts the JSON into keys (`"name":`), strings and brackets (numbers and
# literals are not needed); the loop follows the nesting, so that the keys of VFs,
# steps and problems are passed over.
_vfreadyctl_pfs() {
  local cmd=$1
  shift
  local -a run=("$cmd")
  if type -P timeout >/dev/null 2>&1; then
    run=(timeout 3 "$cmd") # a bus that does not answer must not hang the shell
  fi
  local tok key="" depth=0 in_pfs=0 value
  local -A seen=()
  while IFS= read -r tok; do
    case $tok in
      "{" | "[")
        ((depth += 1))
        [[ $tok == "[" && $depth -eq 2 && $key == '"pfs"' ]] && in_pfs=1
        key=""
        ;;
      "}" | "]")
        [[ $depth -eq 2 ]] && in_pfs=0
        ((depth -= 1))
        key=""
        ;;
      *:)
        key=${tok%:}
        key=${key%"${key##*[![:space:]]}"}
        ;;
      *)
        case $key in
          '"pci"' | '"name"' | '"configured_name"' | '"kernel_name"')
            value=${tok#\"}
            value=${value%\"}
            if ((in_pfs && depth == 3)) && [[ -n $value && $value != *\\* &&
              -z ${seen[$value]+x} ]]; then
              seen[$value]=1
              printf '%s\n' "$value"
            fi
            ;;
        esac
        key=""
        ;;
    esac
  done < <("${run[@]}" "$@" status --json 2>/dev/null |
    grep -oE '"([^"\\]|\\.)*"[[:space:]]*:|"([^"\\]|\\.)*"|[][{}]' 2>/dev/null)
}

# Whether $1 is a character at which COMP_WORDBREAKS splits words and that vfreadyctl's
# arguments hold: ':' (PCI addresses, bus addresses) and '=' (--option=value).
_vfreadyctl_break() {
  [[ ($1 == ":" || $1 == "=") && $COMP_WORDBREAKS == *"$1"* ]]
}

_vfreadyctl() {
  local -a words=() bus=()
  local i w last
  # Put back together the words that COMP_WORDBREAKS split at ':' or '='.
  for ((i = 0; i <= COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    last=""
    ((${#words[@]} > 1)) && last=${words[${#words[@]} - 1]}
    if [[ -n $last ]] && { _vfreadyctl_break "$w" || _vfreadyctl_break "${last: -1}"; }; then
      words[${#words[@]} - 1]+=$w
    else
      words+=("$w")
    fi
  done
  local n=${#words[@]}
  local cur=${words[n - 1]} prev=""
  ((n > 1)) && prev=${words[n - 2]}

  # The subcommand, its first positional (render's target), and how many positionals
  # follow it before the word completed.
  local sub="" target="" npos=0
  for ((i = 1; i < n - 1; i++)); do
    w=${words[i]}
    case $w in
      --bus-address)
        bus=(--bus-address "${words[i + 1]}")
        ((i += 1))
        ;;
      --status-file | --timeout | --resource-name | --resource-prefix | --namespace | \
        --configmap | -o | --output)
        ((i += 1))
        ;;
      --bus-address=*) bus=("$w") ;;
      -*) ;;
      *)
        if [[ -z $sub ]]; then
          sub=$w
        else
          ((npos += 1))
          ((npos == 1)) && target=$w
        fi
        ;;
    esac
  done

  COMPREPLY=()
  local words_list="" takes_value="--bus-address --timeout --resource-name --resource-prefix"
  takes_value+=" --namespace --configmap"
  if [[ $prev == --status-file || $cur == --status-file=* ]]; then
    local opt=""
    [[ $cur == --status-file=* ]] && opt=--status-file=
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "${cur#"$opt"}")
    for i in "${!COMPREPLY[@]}"; do
      COMPREPLY[i]=$opt${COMPREPLY[i]}
    done
  elif [[ $prev == -o || $prev == --output ]]; then
    mapfile -t COMPREPLY < <(compgen -W "table json yaml" -- "$cur")
    return 0
  elif [[ $cur == --*=* || -n $prev && " $takes_value " == *" $prev "* ]]; then
    return 0  # a value of the user's own
  else
    if [[ $cur == -* ]]; then
      case $sub in
        "") words_list="-h --help --version --bus-address --no-color" ;;
        status) words_list="-h --help --vfs --json -o --output --status-file" ;;
        describe) words_list="-h --help --json -o --output" ;;
        wait) words_list="-h --help --timeout" ;;
        reconcile | reload) words_list="-h --help --wait --timeout" ;;
        render)
          case $target in
            sriov-device-plugin)
              words_list="-h --help --resource-name --resource-prefix --namespace --configmap"
              ;;
            rdma-shared-device-plugin)
              words_list="-h --help --resource-name --namespace --configmap"
              ;;
            sriov-network-node-policy) words_list="-h --help --resource-name --namespace" ;;
            *) words_list="-h --help --resource-name --resource-prefix --namespace --configmap" ;;
          esac
          ;;
      esac
    elif [[ -z $sub ]]; then
      words_list="status describe wait reconcile reload render"
    elif [[ $sub == render && $npos -eq 0 ]]; then
      words_list="sriov-device-plugin rdma-shared-device-plugin sriov-network-node-policy"
    elif [[ $sub == describe && $npos -eq 0 ]]; then
      words_list=$(_vfreadyctl_pfs "${COMP_WORDS[0]}" "${bus[@]}")
    fi
    [[ -n $words_list ]] || return 0
    mapfile -t COMPREPLY < <(compgen -W "$words_list" -- "$cur")
  fi

  # Readline replaces only what follows the last word break of the word: drop what
  # precedes it from each reply.
  local before=""
  for ((i = ${#cur} - 1; i >= 0; i--)); do
    if _vfreadyctl_break "${cur:i:1}"; then
      before=${cur:0:i+1}
      break
    fi
  done
  if [[ -n $before ]]; then
    for i in "${!COMPREPLY[@]}"; do
      COMPREPLY[i]=${COMPREPLY[i]#"$before"}
    done
  fi
  return 0
}

complete -F _vfreadyctl vfreadyctl
