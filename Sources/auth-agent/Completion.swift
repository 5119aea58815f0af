import AuthCore

/// `auth-agent completion bash|zsh|fish`: completion scripts generated from `CommandHelp`, so a
/// command or option added there completes without touching this. Provider ids come from the
/// agent at completion time, through `auth-agent __complete-providers`.
enum Completion {
    static let shells = ["bash", "zsh", "fish"]

    static func script(_ shell: String) -> String? {
        switch shell {
        case "bash": return bash
        // zsh runs the bash function through its bash-completion emulation, so both complete alike.
        case "zsh": return "(( $+functions[compdef] )) || { autoload -U +X compinit && compinit }\nautoload -U +X bashcompinit && bashcompinit\n" + bash
        case "fish": return fish
        default: return nil
        }
    }

    /// The words that may follow `key` ("token", "config add"): its options, and what its operand completes to.
    private static func entries() -> [(key: String, options: [String], operand: CommandHelp.Operand)] {
        var result: [(key: String, options: [String], operand: CommandHelp.Operand)] = []
        for word in CommandHelp.topLevelWords {
            let exact = CommandHelp.commands.first { $0.name == word }
            let subcommands = CommandHelp.commands.filter { $0.name.hasPrefix(word + " ") }
            var operand = exact.map(operand) ?? .none
            if exact == nil, !subcommands.isEmpty { operand = .words(subcommands.map { String($0.name.dropFirst(word.count + 1)) }) }
            result.append((word, exact?.options.flatMap(\.names) ?? [], operand))
            for sub in subcommands { result.append((sub.name, sub.options.flatMap(\.names), sub.operand)) }
        }
        return result
    }

    /// What a command's operand completes to; `help`'s are the commands, as gh's `help <Tab>` is.
    private static func operand(_ c: CommandHelp) -> CommandHelp.Operand {
        c.name == "help" ? .words(CommandHelp.topLevelWords.filter { $0 != "help" }) : c.operand
    }

    private static let globalFlags = ["--config", "--log-level", "--help"]

    /// The options whose value is one of a few words, completed after them (and skipped when the
    /// command words are counted).
    private static let optionValues = ["--transport": MCPTransport.allCases.map(\.rawValue)]

    static var bash: String {
        var cases = ""
        for e in entries() {
            var line = "        \"\(e.key)\") opts=\"\((e.options + globalFlags).joined(separator: " "))\""
            switch e.operand {
            case .none: break
            case .provider: line += "; operand=providers"
            case .learnedProvider: line += "; operand=learned"
            case .words(let words): line += "; operand=\"\(words.joined(separator: " "))\""
            }
            cases += line + " ;;\n"
        }
        return """
            # auth-agent completion for bash: eval "$(auth-agent completion bash)"
            _auth_agent() {
                # $2 and $3 (the word being completed and the one before) and a count of COMP_WORDS,
                # never an index into it: zsh's bashcompinit passes the same, with 1-based arrays.
                local cur="$2" prev="$3"
                local opts="" operand="" key="" first="" second="" word n=0 skip=1 words=()
                case "$prev" in
                    --config) COMPREPLY=($(compgen -f -- "$cur")); return ;;
                    --log-level) COMPREPLY=($(compgen -W "error warn info debug" -- "$cur")); return ;;
            \(optionValues.sorted { $0.key < $1.key }.map { "        \($0.key)) COMPREPLY=($(compgen -W \"\($0.value.joined(separator: " "))\" -- \"$cur\")); return ;;\n" }.joined())    esac
                # The command words typed so far, without options and their values.
                for word in "${COMP_WORDS[@]}"; do
                    [ $n -ge $COMP_CWORD ] && break
                    n=$((n + 1))
                    if [ $skip = 1 ]; then skip=0; continue; fi
                    case "$word" in
                        \((["--config", "--log-level"] + optionValues.keys.sorted()).joined(separator: "|"))) skip=1 ;;
                        -*) ;;
                        *) words+=("$word") ;;
                    esac
                done
                if [ ${#words[@]} -eq 0 ]; then
                    COMPREPLY=($(compgen -W "\(CommandHelp.topLevelWords.joined(separator: " ")) --version \(globalFlags.joined(separator: " "))" -- "$cur"))
                    return
                fi
                first="${words[@]:0:1}"
                second="${words[@]:1:1}"
                key="$first"
                if [ "$first" = config ] || [ "$second" = configure ]; then [ -n "$second" ] && key="$first $second"; fi
                case "$key" in
            \(cases)    esac
                if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); return; fi
                # One operand: complete it only right after the command words.
                if [ "$key" = "${words[*]}" ]; then
                    if [ "$operand" = providers ]; then
                        COMPREPLY=($(compgen -W "$(auth-agent __complete-providers 2>/dev/null)" -- "$cur"))
                    elif [ "$operand" = learned ]; then
                        COMPREPLY=($(compgen -W "$(auth-agent __complete-providers --learned 2>/dev/null)" -- "$cur"))
                    elif [ -n "$operand" ]; then
                        COMPREPLY=($(compgen -W "$operand" -- "$cur"))
                    fi
                fi
            }
            complete -F _auth_agent auth-agent

            """
    }

    static var fish: String {
        var lines = [
            "# auth-agent completion for fish: auth-agent completion fish > ~/.config/fish/completions/auth-agent.fish",
            "complete -c auth-agent -f",
            "complete -c auth-agent -l config -r -F -d 'configuration file'",
            "complete -c auth-agent -l log-level -x -a 'error warn info debug' -d 'log level'",
            "complete -c auth-agent -s h -l help -d 'show help'",
            "complete -c auth-agent -n __fish_use_subcommand -l version -d 'print the version'",
        ]
        func quoted(_ s: String) -> String { "'" + s.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'" }
        func short(_ s: String) -> String { String(s.prefix { $0 != "." && $0 != ":" }) }
        for word in CommandHelp.topLevelWords {
            let doc = CommandHelp.commands.first { $0.name == word }
            lines.append("complete -c auth-agent -n __fish_use_subcommand -a \(word) -d \(quoted(short(doc?.summary ?? "\(word) commands")))")
        }
        for c in CommandHelp.commands {
            let parts = c.name.split(separator: " ").map(String.init)
            var condition = "__fish_seen_subcommand_from \(parts[0])"
            if parts.count > 1 { condition += "; and __fish_seen_subcommand_from \(parts[1])" }
            for option in c.options {
                for name in option.names {
                    let flag = name.hasPrefix("--") ? "-l \(name.dropFirst(2))" : "-s \(name.dropFirst())"
                    let values = optionValues[name].map { " -x -a \(quoted($0.joined(separator: " ")))" } ?? ""
                    lines.append("complete -c auth-agent -n \(quoted(condition)) \(flag)\(values) -d \(quoted(short(option.text)))")
                }
            }
            switch operand(c) {
            case .none: break
            case .provider: lines.append("complete -c auth-agent -n \(quoted(condition)) -a '(auth-agent __complete-providers 2>/dev/null)'")
            case .learnedProvider: lines.append("complete -c auth-agent -n \(quoted(condition)) -a '(auth-agent __complete-providers --learned 2>/dev/null)'")
            case .words(let words): lines.append("complete -c auth-agent -n \(quoted(condition)) -a \(quoted(words.joined(separator: " ")))")
            }
        }
        for sub in CommandHelp.commands where sub.name.hasPrefix("config ") {
            lines.append("complete -c auth-agent -n '__fish_seen_subcommand_from config' -a \(sub.name.dropFirst(7)) -d \(quoted(short(sub.summary)))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `__complete-providers`: every provider id the agent's `status` names — configured, and the
    /// APIs it learned (a learned id is typed as often as a configured one) — or with `learnedOnly`
    /// only the learned ones, the ones `forget` takes. Quietly nothing when no agent can be asked:
    /// a completion must never print errors.
    static func printProviders(configPath: String?, learnedOnly: Bool) {
        guard let link = try? AgentLink.open(configPath: configPath, logLevel: .error),
              let status = try? link.call(StatusMethod.self, ()) else { return }
        let ids = status.providers.filter { !learnedOnly || $0.json["learned"] == true }.map(\.id)
        if !ids.isEmpty { StandardStream.write(Array((ids.joined(separator: "\n") + "\n").utf8)) }
        link.finish()
    }
}
