#pragma once
// USRs that do not depend on what a parse read before.
//
// clang's USRGenerator writes a dependent name (`typename enable_if<C, int>::type`) as `^`, its
// qualifier as printed text, then `:` and the name. The qualifier is a canonical type, and clang
// keeps one node per canonical form per translation unit: the first one the parse created, with
// the names and qualifiers it was written with there. So an expression inside it
// (`std::is_integral<T>::value`) prints the template parameter names and qualifiers of whichever
// template the parse met first with that form (`is_integral<Char>::value` in another), and one
// declaration gets another USR in another TU, or with a PCH before it (the header order
// changes): a reference from one TU then misses the declaration another TU stored. ({fmt}'s
// FMT_ENABLE_IF is written over and over with T, Char, OutputIt...)
//
// stableUsr() rewrites each such qualifier to what every parse agrees on: a name that is
// neither qualified, nor a template or function name, nor a keyword (a template parameter, or a
// type named without its scope) becomes `$`, and qualifiers before a name (`std::`, `detail::`)
// are dropped. Canonical template parameters (`type-parameter-0-1`) stay as they are.

#include <string>
#include <string_view>

namespace symdex {

/// `usr`, or its rewrite into `scratch` if it has a dependent name (see above).
std::string_view stableUsr(const char* usr, std::string& scratch);

} // namespace symdex
