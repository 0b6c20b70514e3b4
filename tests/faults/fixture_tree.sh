# The generated tree kill_anywhere.sh kills indexers on, and its edits: sourced, not run.
# Defines the tree adapter kill_anywhere_lib.sh expects: tree_create DIR, tree_apply SCENARIO,
# tree_state, and sets tree_root and tree_db.
#
# The tree: TUS sources (src/tuNN.cpp) and src/late.cpp over six shared headers, each TU also
# pulling in <vector>, <map>, <string> and <memory>, so that a cold index at --threads 2 takes
# a second or two. The edits are chosen so that a TU left unparsed after its inputs changed
# shows in its own records, not only in the header's:
# - header: include/util.h declares take(int) or take(long) (shifted by one line); the even
#   TUs call take(1), so their main files reference one USR or the other.
# - macro: include/calls.h has `#define CALL f1` or `f2`; every TU calls CALL(), and every
#   third TU includes include/via_macro.h, whose own text never changes but whose references
#   follow CALL: its owner must extract it again (docs/dependencies.md).
# - remove / add: src/late.cpp (the only includer of include/late_only.h) leaves the compile
#   database or comes back.

tree_tus=${FAULT_TREE_TUS:-16}
tree_tu_functions=${FAULT_TREE_TU_FUNCTIONS:-100}
tree_header_variant=0 # 0: take(int), 1: take(long)
tree_macro=f1
tree_late=1 # src/late.cpp in compile_commands.json

tree_write_util() {
    {
        echo '#pragma once'
        [ "$tree_header_variant" = 1 ] && echo '// edited: take() now takes a long'
        echo '#include <map>'
        echo '#include <string>'
        echo 'namespace fx {'
        if [ "$tree_header_variant" = 1 ]; then echo 'void take(long value);'; else echo 'void take(int value);'; fi
        echo 'inline int count(const std::map<std::string, int>& m, const std::string& k) {'
        echo '    auto it = m.find(k);'
        echo '    return it == m.end() ? 0 : it->second;'
        echo '}'
        echo '} // namespace fx'
    } >"$tree_root/include/util.h"
}

tree_write_calls() {
    printf '#pragma once\nint f1();\nint f2();\n#define CALL %s\n' "$tree_macro" >"$tree_root/include/calls.h"
}

tree_write_db() {
    local sources=(src/calls.cpp) i
    for ((i = 0; i < tree_tus; ++i)); do sources+=("$(printf 'src/tu%02d.cpp' "$i")"); done
    [ "$tree_late" = 1 ] && sources+=(src/late.cpp)
    {
        echo '['
        for i in "${!sources[@]}"; do
            printf '  {"directory": "%s", "file": "%s", "arguments": ["c++", "-std=c++17", "-Iinclude", "-c", "%s"]}%s\n' \
                "$tree_root" "${sources[$i]}" "${sources[$i]}" "$([ "$i" -lt $((${#sources[@]} - 1)) ] && echo ,)"
        done
        echo ']'
    } >"$tree_root/compile_commands.json.tmp"
    mv "$tree_root/compile_commands.json.tmp" "$tree_root/compile_commands.json"
}

tree_write_tu() { # NAME INDEX
    local i=$2
    {
        echo '#include "base.h"'
        echo '#include "calls.h"'
        [ $((i % 3)) = 0 ] && echo '#include "via_macro.h"'
        [ $((i % 2)) = 0 ] && echo '#include "util.h"'
        [ $((i % 2)) = 1 ] && echo '#include "shapes.h"'
        [ $((i % 4)) = 1 ] && echo '#include "containers.h"'
        [ "$1" = late ] && echo '#include "late_only.h"'
        echo '#include <algorithm>'
        echo '#include <memory>'
        echo "namespace $1 {"
        echo "struct Widget$i : fx::Base {"
        echo "    int id() const override { return $i; }"
        echo '    std::vector<std::string> names;'
        echo '};'
        echo "int run$i(std::map<std::string, int>& table) {"
        echo "    auto w = std::make_unique<Widget$i>();"
        echo '    w->names.push_back("w");'
        echo '    std::sort(w->names.begin(), w->names.end());'
        echo '    int total = w->id() + static_cast<int>(table.size());'
        echo '    total += CALL();'
        [ $((i % 2)) = 0 ] && echo '    fx::take(1);' && echo '    total += fx::count(table, "k");'
        [ $((i % 2)) = 1 ] && echo '    fx::Circle c(2.0);' && echo '    total += static_cast<int>(fx::area(c));'
        [ $((i % 4)) = 1 ] && echo '    fx::Registry<int> r;' && echo '    r.add("x", total);'
        [ "$1" = late ] && echo '    total += late_only::value();'
        echo '    return total;'
        echo '}'
        # Work of the TU's own, which no session skips: spreads the TUs' commits over the run.
        local k
        for ((k = 0; k < tree_tu_functions; ++k)); do
            echo "int step$k(std::map<std::string, int>& m, std::vector<int>& v) {"
            echo "    m[\"k$k\"] += $k;"
            echo "    v.push_back(static_cast<int>(m.size()) + CALL());"
            echo '    return static_cast<int>(v.size());'
            echo '}'
        done
        echo "} // namespace $1"
    } >"$tree_root/src/$1.cpp"
}

tree_create() { # DIR
    tree_root=$1
    tree_db=$tree_root/compile_commands.json
    mkdir -p "$tree_root/include" "$tree_root/src"
    cat >"$tree_root/include/base.h" <<'H'
#pragma once
#include <map>
#include <string>
#include <vector>
namespace fx {
struct Base {
    virtual ~Base() = default;
    virtual int id() const = 0;
};
using Table = std::map<std::string, std::vector<int>>;
} // namespace fx
H
    cat >"$tree_root/include/shapes.h" <<'H'
#pragma once
#include "base.h"
namespace fx {
struct Shape : Base {
    int id() const override { return 0; }
};
struct Circle : Shape {
    explicit Circle(double r) : radius(r) {}
    double radius;
};
template <typename S> double area(const S& s) { return 3.14159 * s.radius * s.radius; }
} // namespace fx
H
    cat >"$tree_root/include/containers.h" <<'H'
#pragma once
#include <map>
#include <string>
#include <vector>
namespace fx {
template <typename T> class Registry {
public:
    void add(const std::string& name, T value) { items_[name].push_back(value); }
    const std::vector<T>* find(const std::string& name) const {
        auto it = items_.find(name);
        return it == items_.end() ? nullptr : &it->second;
    }
private:
    std::map<std::string, std::vector<T>> items_;
};
} // namespace fx
H
    # Unchanged by the macro edit, yet what it references follows calls.h's CALL.
    cat >"$tree_root/include/via_macro.h" <<'H'
#pragma once
#include "calls.h"
namespace fx {
inline int viaMacro() { return CALL() + 1; }
} // namespace fx
H
    cat >"$tree_root/include/late_only.h" <<'H'
#pragma once
namespace late_only {
inline int value() { return 42; }
} // namespace late_only
H
    cat >"$tree_root/src/calls.cpp" <<'C'
#include "calls.h"
#include "util.h"
int f1() { return 1; }
int f2() { return 2; }
namespace fx {
void take(int) {}
void take(long) {}
} // namespace fx
C
    local i
    for ((i = 0; i < tree_tus; ++i)); do tree_write_tu "$(printf 'tu%02d' "$i")" "$i"; done
    tree_write_tu late "$tree_tus"
    tree_write_util
    tree_write_calls
    tree_write_db
}

# Applies one edit of the scenario (each call toggles it); "cold" edits nothing.
tree_apply() { # cold|header|macro|remove|add
    case $1 in
    cold) ;;
    header) tree_header_variant=$((1 - tree_header_variant)) && tree_write_util ;;
    macro) tree_macro=$([ "$tree_macro" = f1 ] && echo f2 || echo f1) && tree_write_calls ;;
    remove) tree_late=0 && tree_write_db ;;
    add) tree_late=1 && tree_write_db ;;
    *) echo "tree_apply: unknown scenario '$1'" >&2 && return 2 ;;
    esac
}

# Names the tree's contents: equal names, equal trees (the clean dumps are cached by it).
tree_state() { echo "h${tree_header_variant}-${tree_macro}-late${tree_late}"; }
