/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sym_demangle (symbols/demangle.c) against what Massif, Valgrind 3.19,
   printed for the same symbol-table names. The names are real ones: nm of
   Rust programs built by rustc 1.95 with legacy and with v0 mangling (std
   collections, closures, trait objects, generics, const generics, non-ASCII
   identifiers, and the standard library's own instances), then a set of
   edge cases made by hand (malformed names, hash and suffix variants, C++
   names that look like Rust ones). Every expected string is the label
   Massif printed for a function carrying that name (a C program whose
   functions were given these names, run under valgrind --tool=massif:
   massif_names.py, which makes more), so the test needs neither rustc nor
   valgrind. Non-ASCII text is written as
   octal escapes of its UTF-8. */
#include "symbols/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

struct pair {
	const char *mangled;
	const char *expected;
};

/* Rust legacy names ("_ZN...17h<16 hex>E", optionally ".llvm.N"): the hash
   and the $..$ escapes are gone. */
static const struct pair legacy[] = {
	{ "_ZN4core3fmt5Write9write_fmt17h203f48e6e7c06927E.llvm.1662863542"
	  "50860047",
	  "core::fmt::Write::write_fmt" },
	{ "_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$14reserve_rehash17hef8f7"
	  "5a6cad8cc0fE.llvm.15978191324693868700",
	  "hashbrown::raw::RawTable<T,A>::reserve_rehash" },
	{ "_ZN4edge4main28_$u7b$$u7b$closure$u7d$$u7d$17hf3c2b1dd889f27b2E",
	  "edge::main::{{closure}}" },
	{ "_ZN4core4iter8adapters3map8map_fold28_$u7b$$u7b$closure$u7d$$u7d"
	  "$17ha961065d00b9a514E",
	  "core::iter::adapters::map::map_fold::{{closure}}" },
	{ "_ZN5alloc3str21_$LT$impl$u20$str$GT$6repeat17hef4bee3594e72319E",
	  "alloc::str::<impl str>::repeat" },
	{ "_ZN4core4char7methods22_$LT$impl$u20$char$GT$8to_digit17h050fcc4"
	  "fbdd5ed79E",
	  "core::char::methods::<impl char>::to_digit" },
	{ "_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h13304acf46"
	  "ec7655E",
	  "<&T as core::fmt::Debug>::fmt" },
	{ "_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17hd5dc727c97"
	  "d5200cE",
	  "<&T as core::fmt::Debug>::fmt" },
	{ "_ZN49_$LT$$BP$const$u20$u32$u20$as$u20$edge..Speak$GT$5speak17hf"
	  "97dd2c0cac53b57E",
	  "<*const u32 as edge::Speak>::speak" },
	{ "_ZN4core3ptr9const_ptr33_$LT$impl$u20$$BP$const$u20$T$GT$13is_al"
	  "igned_to17hb0f8d9db0b01569dE",
	  "core::ptr::const_ptr::<impl *const T>::is_aligned_to" },
	{ "_ZN5alloc5slice29_$LT$impl$u20$$u5b$T$u5d$$GT$6repeat17hb029d9cc"
	  "cc9be756E",
	  "alloc::slice::<impl [T]>::repeat" },
	{ "_ZN4core3ptr75drop_in_place$LT$$u5b$alloc..boxed..Box$LT$dyn$u20"
	  "$edge..Speak$GT$$u5d$$GT$17h9f86d96f9c77d909E",
	  "core::ptr::drop_in_place<[alloc::boxed::Box<dyn edge::Speak>]>" },
	{ "_ZN41_$LT$bool$u20$as$u20$core..fmt..Debug$GT$3fmt17h4bd4e7e99e1"
	  "a42d7E",
	  "<bool as core::fmt::Debug>::fmt" },
	{ "_ZN44_$LT$prog..Circle$u20$as$u20$prog..Shape$GT$4name17h3c3ed64"
	  "86f3f9295E",
	  "<prog::Circle as prog::Shape>::name" },
	{ "_ZN5alloc3vec16Vec$LT$T$C$A$GT$3len17h013590221a67ddc9E",
	  "alloc::vec::Vec<T,A>::len" },
	{ "_ZN5alloc11collections5btree3map25BTreeMap$LT$K$C$V$C$A$GT$5entr"
	  "y17hd661edd2a6494b59E",
	  "alloc::collections::btree::map::BTreeMap<K,V,A>::entry" },
	{ "_ZN4edge6nested28_$u7b$$u7b$closure$u7d$$u7d$17h8eae67e0c917c940"
	  "E",
	  "edge::nested::{{closure}}" },
	{ "_ZN4core4iter8adapters3map8map_fold28_$u7b$$u7b$closure$u7d$$u7d"
	  "$17hde09c02d63ca9ee4E",
	  "core::iter::adapters::map::map_fold::{{closure}}" },
	{ "_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h2bbac5f362"
	  "e00403E",
	  "<&T as core::fmt::Debug>::fmt" },
	{ "_ZN47_$LT$u64$u20$as$u20$core..iter..range..Step$GT$17forward_un"
	  "checked17he0927cd4f4b813cbE",
	  "<u64 as core::iter::range::Step>::forward_unchecked" },
	{ "_ZN4core3ptr46drop_in_place$LT$alloc..vec..Vec$LT$u8$GT$$GT$17h3"
	  "af4b6302b3a9e4cE",
	  "core::ptr::drop_in_place<alloc::vec::Vec<u8>>" },
	{ "_ZN4core3ptr88drop_in_place$LT$alloc..sync..Arc$LT$std..thread.."
	  "lifecycle..Packet$LT$usize$GT$$GT$$GT$17hf3a7d537e012d71fE",
	  "core::ptr::drop_in_place<alloc::sync::Arc<std::thread::lifecycle"
	  "::Packet<usize>>>" },
	{ "_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h3a0843167f"
	  "e39645E",
	  "<&T as core::fmt::Debug>::fmt" },
	{ "_ZN45_$LT$T$u20$as$u20$alloc..string..ToString$GT$9to_string17h2"
	  "e192fd7ed031d56E",
	  "<T as alloc::string::ToString>::to_string" },
	{ "_ZN45_$LT$$LP$$RP$$u20$as$u20$core..fmt..Debug$GT$3fmt17h2a692a6"
	  "6167e0347E",
	  "<() as core::fmt::Debug>::fmt" },
	{ "_ZN54_$LT$$LP$$RP$$u20$as$u20$std..process..Termination$GT$6repo"
	  "rt17h19b943aa6d7e99a6E",
	  "<() as std::process::Termination>::report" },
	{ "_ZN54_$LT$$u5b$T$u3b$$u20$N$u5d$$u20$as$u20$edge..Speak$GT$5spea"
	  "k17h1496ee27e43da13bE",
	  "<[T; N] as edge::Speak>::speak" },
	{ "_ZN4core5array69_$LT$impl$u20$core..fmt..Debug$u20$for$u20$$u5b$"
	  "T$u3b$$u20$N$u5d$$GT$3fmt17h256d456ef8bb6384E",
	  "core::array::<impl core::fmt::Debug for [T; N]>::fmt" },
	{ "_ZN4core3ptr196drop_in_place$LT$alloc..boxed..Box$LT$dyn$u20$cor"
	  "e..ops..function..Fn$LT$$LP$$RF$str$C$$RP$$GT$$u2b$Output$u20$$u"
	  "3d$$u20$alloc..string..String$u2b$core..marker..Sync$u2b$core..m"
	  "arker..Send$GT$$GT$17h6aac71b30cd67834E",
	  "core::ptr::drop_in_place<alloc::boxed::Box<dyn core::ops::functi"
	  "on::Fn<(&str,)>+Output = alloc::string::String+core::marker::Syn"
	  "c+core::marker::Send>>" },
	{ "_ZN4core3ptr130drop_in_place$LT$core..result..Result$LT$$LP$$RP$"
	  "$C$alloc..boxed..Box$LT$dyn$u20$core..any..Any$u2b$core..marker."
	  ".Send$GT$$GT$$GT$17h7d2785bc865cdd6dE",
	  "core::ptr::drop_in_place<core::result::Result<(),alloc::boxed::B"
	  "ox<dyn core::any::Any+core::marker::Send>>>" },
	{ "_ZN78_$LT$$u21$$u20$as$u20$std..sys..thread_local..native..lazy."
	  ".DestroyedState$GT$13register_dtor17h4d928ff597dc8e86E",
	  "<! as std::sys::thread_local::native::lazy::DestroyedState>::reg"
	  "ister_dtor" },
	{ "_ZN90_$LT$extern$u20$$u22$C$u22$$u20$fn$LP$i32$RP$$u20$.$GT$$u20"
	  "$i32$u20$as$u20$edge..Speak$GT$5speak17h527bdf8e6265751cE",
	  "<extern \"C\" fn(i32) .> i32 as edge::Speak>::speak" },
	{ "_ZN207_$LT$alloc..boxed..Box$LT$dyn$u20$core..ops..function..Fn$"
	  "LT$$LP$$RF$str$C$$RP$$GT$$u2b$Output$u20$$u3d$$u20$alloc..string"
	  "..String$u2b$core..marker..Sync$u2b$core..marker..Send$GT$$u20$a"
	  "s$u20$edge..Speak$GT$5speak17h7966f83dc7b03827E",
	  "<alloc::boxed::Box<dyn core::ops::function::Fn<(&str,)>+Output ="
	  " alloc::string::String+core::marker::Sync+core::marker::Send> as"
	  " edge::Speak>::speak" },
	{ "_ZN4core3ptr154drop_in_place$LT$alloc..boxed..Box$LT$dyn$u20$cor"
	  "e..ops..function..FnOnce$LT$$LP$$RP$$GT$$u2b$Output$u20$$u3d$$u2"
	  "0$$LP$$RP$$u2b$core..marker..Send$GT$$GT$17h8e685d83411ccd00E",
	  "core::ptr::drop_in_place<alloc::boxed::Box<dyn core::ops::functi"
	  "on::FnOnce<()>+Output = ()+core::marker::Send>>" },
	{ "_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$4find28_$u7b$$u7b$closur"
	  "e$u7d$$u7d$17hb9e49b3c9ed01ec0E",
	  "hashbrown::raw::RawTable<T,A>::find::{{closure}}" },
	{ "_ZN4core3ptr140drop_in_place$LT$$LT$alloc..collections..vec_dequ"
	  "e..VecDeque$LT$T$C$A$GT$$u20$as$u20$core..ops..drop..Drop$GT$..d"
	  "rop..Dropper$LT$u64$GT$$GT$17h470c151988ff5a07E",
	  "core::ptr::drop_in_place<<alloc::collections::vec_deque::VecDequ"
	  "e<T,A> as core::ops::drop::Drop>::drop::Dropper<u64>>" },
	{ "_ZN4core5slice4sort6stable9quicksort9quicksort17hbdebec07a6031c9"
	  "eE",
	  "core::slice::sort::stable::quicksort::quicksort" },
	{ "_ZN4core3fmt9Arguments3new17h5b8af22accdf9eccE",
	  "core::fmt::Arguments::new" },
	{ "_ZN9hashbrown11rustc_entry62_$LT$impl$u20$hashbrown..map..HashMa"
	  "p$LT$K$C$V$C$S$C$A$GT$$GT$11rustc_entry28_$u7b$$u7b$closure$u7d$"
	  "$u7d$17h81e89099ead1e129E",
	  "hashbrown::rustc_entry::<impl hashbrown::map::HashMap<K,V,S,A>>:"
	  ":rustc_entry::{{closure}}" },
	{ "_ZN4core4iter6traits8iterator8Iterator8for_each4call28_$u7b$$u7b"
	  "$closure$u7d$$u7d$17hde7c116b41902d2aE",
	  "core::iter::traits::iterator::Iterator::for_each::call::{{closur"
	  "e}}" },
	{ "_ZN5alloc3vec16Vec$LT$T$C$A$GT$11extend_with17h4eed788b84013a07E",
	  "alloc::vec::Vec<T,A>::extend_with" },
	{ "_ZN4core3fmt2rt8Argument11new_display17hab0155327c1764b0E",
	  "core::fmt::rt::Argument::new_display" },
	{ "_ZN4core10intrinsics11rotate_left17ha8859840a1a5ae3aE",
	  "core::intrinsics::rotate_left" },
	{ "_ZN4core3ops8function6FnOnce9call_once17h617c775e8c64c950E",
	  "core::ops::function::FnOnce::call_once" },
	{ "_ZN97_$LT$alloc..vec..Vec$LT$T$C$A$GT$$u20$as$u20$alloc..vec..sp"
	  "ec_extend..SpecExtend$LT$T$C$I$GT$$GT$11spec_extend17hd9e92feaf4"
	  "a0eac6E",
	  "<alloc::vec::Vec<T,A> as alloc::vec::spec_extend::SpecExtend<T,I"
	  ">>::spec_extend" },
	{ "_ZN86_$LT$alloc..boxed..Box$LT$F$C$A$GT$$u20$as$u20$core..ops..f"
	  "unction..Fn$LT$Args$GT$$GT$4call17h7b89aed39e01161aE",
	  "<alloc::boxed::Box<F,A> as core::ops::function::Fn<Args>>::call" },
	{ "_ZN5alloc3vec9from_elem17h87aedb386bf68004E",
	  "alloc::vec::from_elem" },
	{ "_ZN4core5slice3raw18from_raw_parts_mut18precondition_check17h567"
	  "234afebbd6ae9E",
	  "core::slice::raw::from_raw_parts_mut::precondition_check" },
	{ "_ZN4core4hash6Hasher9write_u3217h59cb47f6131c316bE",
	  "core::hash::Hasher::write_u32" },
	{ "_ZN5alloc3vec9from_elem17h5dee27d1cd87ec53E",
	  "alloc::vec::from_elem" },
	{ "_ZN102_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u2"
	  "0$core..iter..traits..iterator..Iterator$GT$9size_hint17h53f7138"
	  "ce25c8beeE",
	  "<core::iter::adapters::map::Map<I,F> as core::iter::traits::iter"
	  "ator::Iterator>::size_hint" },
	{ "_ZN4core5slice4sort6shared5pivot11median3_rec17h3a47512466565175"
	  "E",
	  "core::slice::sort::shared::pivot::median3_rec" },
	{ "_ZN4core3ptr33drop_in_place$LT$prog..Circle$GT$17hfbd0990a690bb3"
	  "4aE",
	  "core::ptr::drop_in_place<prog::Circle>" },
	{ "_ZN4core3ptr56drop_in_place$LT$$LP$u64$C$alloc..string..String$R"
	  "P$$GT$17h611db3926612f669E",
	  "core::ptr::drop_in_place<(u64,alloc::string::String)>" },
	{ "_ZN91_$LT$core..slice..iter..Iter$LT$T$GT$$u20$as$u20$core..iter"
	  "..traits..iterator..Iterator$GT$4next17h0735ad5e20b3e270E",
	  "<core::slice::iter::Iter<T> as core::iter::traits::iterator::Ite"
	  "rator>::next" },
	{ "_ZN5alloc3vec16Vec$LT$T$C$A$GT$14extend_trusted28_$u7b$$u7b$clos"
	  "ure$u7d$$u7d$17hec31b07f2afd75f6E",
	  "alloc::vec::Vec<T,A>::extend_trusted::{{closure}}" },
	{ "_ZN3std11collections4hash3map28HashMap$LT$K$C$V$C$S$C$A$GT$3len1"
	  "7h9a26b0ea48cd4ff3E",
	  "std::collections::hash::map::HashMap<K,V,S,A>::len" },
	{ "_ZN4core4iter5range101_$LT$impl$u20$core..iter..traits..iterator"
	  "..Iterator$u20$for$u20$core..ops..range..Range$LT$A$GT$$GT$4next"
	  "17hb55dfdb2a0586180E",
	  "core::iter::range::<impl core::iter::traits::iterator::Iterator "
	  "for core::ops::range::Range<A>>::next" },
	{ "_ZN9hashbrown3raw13RawTableInner31find_or_find_insert_index_inne"
	  "r17h7231c77a93433064E",
	  "hashbrown::raw::RawTableInner::find_or_find_insert_index_inner" },
	{ "_ZN5alloc11collections5btree3mem8take_mut28_$u7b$$u7b$closure$u7"
	  "d$$u7d$17h648cf92291c6dc47E",
	  "alloc::collections::btree::mem::take_mut::{{closure}}" },
	{ "_ZN102_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u2"
	  "0$core..iter..traits..iterator..Iterator$GT$9size_hint17he186bcf"
	  "8b45dbb03E",
	  "<core::iter::adapters::map::Map<I,F> as core::iter::traits::iter"
	  "ator::Iterator>::size_hint" },
	{ "_ZN5alloc4sync16Arc$LT$T$C$A$GT$9is_unique17he5cd4faf62682cb8E",
	  "alloc::sync::Arc<T,A>::is_unique" },
	{ "_ZN70_$LT$core..result..Result$LT$T$C$E$GT$$u20$as$u20$core..fmt"
	  "..Debug$GT$3fmt17hf51d38536fd0b2a7E",
	  "<core::result::Result<T,E> as core::fmt::Debug>::fmt" },
	{ "_ZN102_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u2"
	  "0$core..iter..traits..iterator..Iterator$GT$9size_hint17he75fae7"
	  "4df66125bE",
	  "<core::iter::adapters::map::Map<I,F> as core::iter::traits::iter"
	  "ator::Iterator>::size_hint" },
	{ "_ZN63_$LT$I$u20$as$u20$core..iter..traits..collect..IntoIterator"
	  "$GT$9into_iter17hb27a9c6ab9bd8b92E",
	  "<I as core::iter::traits::collect::IntoIterator>::into_iter" },
	{ "_ZN82_$LT$core..array..iter..IntoIter$LT$T$C$_$GT$$u20$as$u20$co"
	  "re..ops..drop..Drop$GT$4drop17h9724b78ba30df676E",
	  "<core::array::iter::IntoIter<T,_> as core::ops::drop::Drop>::dro"
	  "p" },
	{ "_ZN9hashbrown11rustc_entry62_$LT$impl$u20$hashbrown..map..HashMa"
	  "p$LT$K$C$V$C$S$C$A$GT$$GT$11rustc_entry17h65eed97508cb3646E",
	  "hashbrown::rustc_entry::<impl hashbrown::map::HashMap<K,V,S,A>>:"
	  ":rustc_entry" },
	{ "_ZN4core3fmt2rt8Argument9new_debug17h1960bed03cf3e380E",
	  "core::fmt::rt::Argument::new_debug" },
	{ "_ZN4core9core_arch3x864sse215_mm_store_si12817h2047df381fffa79dE",
	  "core::core_arch::x86::sse2::_mm_store_si128" },
	{ "_ZN91_$LT$core..slice..iter..Iter$LT$T$GT$$u20$as$u20$core..iter"
	  "..traits..iterator..Iterator$GT$4next17h4a5c79636ba7685eE",
	  "<core::slice::iter::Iter<T> as core::iter::traits::iterator::Ite"
	  "rator>::next" },
};

/* Rust v0 names ("_R..."), in libiberty's spelling: generic arguments,
   "{closure#0}", "<X as Y>", "{shim:vtable#0}", punycode identifiers. */
static const struct pair v0[] = {
	{ "_RNCNvCs27w03oTvC5S_4edge4main0B3_",
	  "edge::main::{closure#0}" },
	{ "_RINvNtNtNtNtCsgEmfK2I1SDS_4core5slice4sort6stable9quicksort16st"
	  "able_partitionNtNtCslNYArtu3iFV_5alloc6string6StringNCINvB2_9qui"
	  "cksortB1d_NvYB1d_NtNtBa_3cmp10PartialOrd2ltE0ECs56HGsqMBDvY_4pro"
	  "g",
	  "core::slice::sort::stable::quicksort::stable_partition::<alloc::"
	  "string::String, core::slice::sort::stable::quicksort::quicksort<"
	  "alloc::string::String, <alloc::string::String as core::cmp::Part"
	  "ialOrd>::lt>::{closure#0}>" },
	{ "_RNCNCINvCs27w03oTvC5S_4edge6nestedReE00B6_",
	  "edge::nested::<&str>::{closure#0}::{closure#0}" },
	{ "_RNCNCNvNtNtCs59TyybOfEHA_18rustc_codegen_llvm9debuginfo8metadat"
	  "a24build_tuple_type_di_node00B9_",
	  "rustc_codegen_llvm::debuginfo::metadata::build_tuple_type_di_nod"
	  "e::{closure#0}::{closure#0}" },
	{ "_RNvXs7_Cs27w03oTvC5S_4edgePmNtB5_5Speak5speak",
	  "<*const u32 as edge::Speak>::speak" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRNtNtCs61nHkvlE5qF_9rustc_ast6"
	  "format14FormatDebugHexNtB6_5Debug3fmtCsfqPBR87PSkx_9rustc_hir",
	  "<&rustc_ast::format::FormatDebugHex as core::fmt::Debug>::fmt" },
	{ "_RINvCs27w03oTvC5S_4edge6nestedReEB2_",
	  "edge::nested::<&str>" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeNtNtNtCsaspd4q2l9mR"
	  "_21rustc_trait_selection6traits4util19PlaceholderReplacerECsiH6Q"
	  "V7Xwgb9_16rustc_const_eval",
	  "core::ptr::drop_in_place::<rustc_trait_selection::traits::util::"
	  "PlaceholderReplacer>" },
	{ "_RNvNtNtNtNtCsPuPAmYs7lt_4rand4rngs7adapter9reseeding4fork16get_"
	  "fork_counter",
	  "rand::rngs::adapter::reseeding::fork::get_fork_counter" },
	{ "_RNvYNtNtCsbLd7R6uW4Ys_6ruzstd5frame20FrameDescriptorErrorNtNtCs"
	  "gEmfK2I1SDS_4core5error5Error11descriptionCs5NsDXlmzMSp_6object",
	  "<ruzstd::frame::FrameDescriptorError as core::error::Error>::des"
	  "cription" },
	{ "_RNvMCs27w03oTvC5S_4edgeINtB2_3ArrKj11_E4makeB2_",
	  "<edge::Arr<17>>::make" },
	{ "_RNvMsa_NtNtNtNtCs6mNkMfao1uC_12aho_corasick6packed5teddy7builde"
	  "r6x86_64INtB5_8SlimAVX2Kj1_E3new",
	  "<aho_corasick::packed::teddy::builder::x86_64::SlimAVX2<1>>::new" },
	{ "_RNvMs_Cs27w03oTvC5S_4edgeINtB4_1BKb0_E4makeB4_",
	  "<edge::B<false>>::make" },
	{ "_RNvMs3_NtCsdoLGDhjbLAL_13rustc_type_ir11fast_rejectINtB5_14Deep"
	  "RejectCtxtNtNtNtCsdadwybgsbvk_12rustc_middle2ty7context6TyCtxtKb"
	  "0_Kb1_E21types_may_unify_innerCshb4CxotJIr4_15rustc_interface",
	  "<rustc_type_ir::fast_reject::DeepRejectCtxt<rustc_middle::ty::co"
	  "ntext::TyCtxt, false, true>>::types_may_unify_inner" },
	{ "_RNvMs0_Cs27w03oTvC5S_4edgeINtB5_1CKc61_E4makeB5_",
	  "<edge::C<'a'>>::make" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRNtCs7GcKhkb6nlg_9rustc_abi4Si"
	  "zeNtB6_5Debug3fmtBy_",
	  "<&rustc_abi::Size as core::fmt::Debug>::fmt" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRNtNtCs7GcKhkb6nlg_9rustc_abi1"
	  "0extern_abi9ExternAbiNtB6_5Debug3fmtCs59TyybOfEHA_18rustc_codege"
	  "n_llvm",
	  "<&rustc_abi::extern_abi::ExternAbi as core::fmt::Debug>::fmt" },
	{ "_RNvXs6a_NtCs61nHkvlE5qF_9rustc_ast3astNtB6_6TyKindNtNtCsgEmfK2I"
	  "1SDS_4core3fmt5Debug3fmt",
	  "<rustc_ast::ast::TyKind as core::fmt::Debug>::fmt" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeNtNtNtCsdadwybgsbvk"
	  "_12rustc_middle3mir6syntax13StatementKindECs3LGw5nGcjh2_19rustc_"
	  "mir_transform.cold",
	  "core::ptr::drop_in_place::<rustc_middle::mir::syntax::StatementK"
	  "ind>" },
	{ "_RNvMs2_Cs27w03oTvC5S_4edgeINtB5_1UKofffffffffffffffffffffffffff"
	  "fffff_E4makeB5_",
	  "<edge::U<0xfffffffffffffffffffffffffffffff_>>::make" },
	{ "_RNvXNvNtCskYKobW0iQf9_12rustc_target4specse_1__NtB4_8RustcAbiNt"
	  "Cs3lCblvf8hsb_8schemars10JsonSchema11json_schema",
	  "<rustc_target::spec::RustcAbi as schemars::JsonSchema>::json_sch"
	  "ema" },
	{ "_RNvMs3_Cs27w03oTvC5S_4edgeINtB5_4WrapDNtNtCsgEmfK2I1SDS_4core3f"
	  "mt5DebugNtNtBE_6marker4SendEL_E4makeB5_",
	  "<edge::Wrap<dyn core::fmt::Debug + core::marker::Send>>::make" },
	{ "_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecRDNtNtCs2hCOS"
	  "JlNTWo_12tracing_core8callsite8CallsiteEL_E8grow_oneBS_",
	  "<alloc::raw_vec::RawVec<&dyn tracing_core::callsite::Callsite>>:"
	  ":grow_one" },
	{ "_RNvXs8_Cs27w03oTvC5S_4edgeFhEhNtB5_5Speak5speak",
	  "<fn(u8) -> u8 as edge::Speak>::speak" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtCs7GcKhkb6nlg_9r"
	  "ustc_abi11FieldsShapeNtNtNtBJ_6layout2ty8FieldIdxEECsdgiGY16OeT5"
	  "_15rustc_transmute",
	  "core::ptr::drop_in_place::<rustc_abi::FieldsShape<rustc_abi::lay"
	  "out::ty::FieldIdx>>" },
	{ "_RNvXs9_Cs27w03oTvC5S_4edgeFKClElNtB5_5Speak5speak",
	  "<extern \"C\" fn(i32) -> i32 as edge::Speak>::speak" },
	{ "_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecTOhFUKCBN_EuE"
	  "NtNtCsjrHSEGnQ3l9_3std5alloc6SystemE8grow_oneB13_",
	  "<alloc::raw_vec::RawVec<(*mut u8, unsafe extern \"C\" fn(*mut u8"
	  ")), std::alloc::System>>::grow_one" },
	{ "_RNvXsb_Cs27w03oTvC5S_4edgeFG_RL0_hERL0_hNtB5_5Speak5speak",
	  "<for<'a> fn(&'a u8) -> &'a u8 as edge::Speak>::speak" },
	{ "_RNvXs4_Cs27w03oTvC5S_4edgeAhj3_NtB5_5Speak5speakB5_",
	  "<[u8; 3] as edge::Speak>::speak" },
	{ "_RNCINvNtCsfhTr2ijyTAe_16rustc_query_impl8plumbing21query_key_ha"
	  "sh_verifyINtNtNtCsdadwybgsbvk_12rustc_middle5query6caches12Defau"
	  "ltCacheNtNtNtB1f_2ty8instance12InstanceKindINtNtB1d_5erase10Eras"
	  "edDataAhj8_EEE0B6_.warm",
	  "rustc_query_impl::plumbing::query_key_hash_verify::<rustc_middle"
	  "::query::caches::DefaultCache<rustc_middle::ty::instance::Instan"
	  "ceKind, rustc_middle::query::erase::ErasedData<[u8; 8]>>>::{clos"
	  "ure#0}" },
	{ "_RNvMs3_Cs27w03oTvC5S_4edgeINtB5_4WrapShE4makeB5_",
	  "<edge::Wrap<[u8]>>::make" },
	{ "_RNvXs8_NtCslNYArtu3iFV_5alloc5boxedINtB5_3BoxDNtCs56HGsqMBDvY_4"
	  "prog5ShapeEL_ENtNtNtCsgEmfK2I1SDS_4core3ops4drop4Drop4dropBK_",
	  "<alloc::boxed::Box<dyn prog::Shape> as core::ops::drop::Drop>::d"
	  "rop" },
	{ "_RNvXs5_Cs27w03oTvC5S_4edgeThRedENtB5_5Speak5speak",
	  "<(u8, &str, f64) as edge::Speak>::speak" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtCs3Wn5k6Pa3dh_8t"
	  "hin_vec7ThinVecNtNtCs61nHkvlE5qF_9rustc_ast3ast4StmtEECsjDQNFu7n"
	  "Q4C_17rustc_driver_impl",
	  "core::ptr::drop_in_place::<thin_vec::ThinVec<rustc_ast::ast::Stm"
	  "t>>" },
	{ "_RNvMs2_NtNtCsgEmfK2I1SDS_4core3fmt8buildersNtB5_10DebugTuple5fi"
	  "eld",
	  "<core::fmt::builders::DebugTuple>::field" },
	{ "_RNvNtNtCs7OxSQD10jZQ_18tracing_subscriber3fmt4time6uptime",
	  "tracing_subscriber::fmt::time::uptime" },
	{ "_RNvXs_NtNtNtCs7OxSQD10jZQ_18tracing_subscriber3fmt6format6escap"
	  "eINtB4_6EscapeRDNtNtCsgEmfK2I1SDS_4core3fmt5DebugEL_EB1f_3fmtBa_",
	  "<tracing_subscriber::fmt::format::escape::Escape<&dyn core::fmt:"
	  ":Debug> as core::fmt::Debug>::fmt" },
	{ "_RNvNtCs9gE3dmllNPh_12rustc_passes8abi_test8test_abi",
	  "rustc_passes::abi_test::test_abi" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRNtNtCsfqPBR87PSkx_9rustc_hir3"
	  "def16NonMacroAttrKindNtB6_5Debug3fmtCs9gE3dmllNPh_12rustc_passes",
	  "<&rustc_hir::def::NonMacroAttrKind as core::fmt::Debug>::fmt" },
	{ "_RNvXs1i_NtCsgEmfK2I1SDS_4core3fmtRhNtB6_7Display3fmtCs27w03oTvC"
	  "5S_4edge",
	  "<&u8 as core::fmt::Display>::fmt" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRhNtB6_5Debug3fmtCsgY6Mt91CT9J"
	  "_14rustc_demangle",
	  "<&u8 as core::fmt::Debug>::fmt" },
	{ "_RNvXsv_NtCslNYArtu3iFV_5alloc5boxedINtB5_3BoxDG_INtNtNtCsgEmfK2"
	  "I1SDS_4core3ops8function2FnTRL0_eEEp6OutputNtNtB7_6string6String"
	  "NtNtBR_6marker4SyncNtB23_4SendEL_EIBL_TReEE4callCs27w03oTvC5S_4e"
	  "dge",
	  "<alloc::boxed::Box<dyn for<'a> core::ops::function::Fn<(&'a str,"
	  "), Output = alloc::string::String> + core::marker::Sync + core::"
	  "marker::Send> as core::ops::function::Fn<(&str,)>>::call" },
	{ "_RNvXsa_Cs27w03oTvC5S_4edgeINtNtCslNYArtu3iFV_5alloc5boxed3BoxDG"
	  "_INtNtNtCsgEmfK2I1SDS_4core3ops8function2FnTRL0_eEEp6OutputNtNtB"
	  "t_6string6StringNtNtB17_6marker4SyncNtB2j_4SendEL_ENtB5_5Speak5s"
	  "peak",
	  "<alloc::boxed::Box<dyn for<'a> core::ops::function::Fn<(&'a str,"
	  "), Output = alloc::string::String> + core::marker::Sync + core::"
	  "marker::Send> as edge::Speak>::speak" },
	{ "_RINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuECs27w03oTvC5S_4edge",
	  "std::rt::lang_start::<()>" },
	{ "_RNvMs7_NtNtNtNtCslNYArtu3iFV_5alloc11collections5btree3map5entr"
	  "yINtB5_13OccupiedEntryyNtNtBd_6string6StringE6insertCs56HGsqMBDv"
	  "Y_4prog",
	  "<alloc::collections::btree::map::entry::OccupiedEntry<u64, alloc"
	  "::string::String>>::insert" },
	{ "_RNvMNtNtCs5NsDXlmzMSp_6object5write2peNtB2_6Writer11write_align",
	  "<object::write::pe::Writer>::write_align" },
	{ "_RNvXsy_NtCs5NsDXlmzMSp_6object6commonNtB5_11SectionKindNtNtCsgE"
	  "mfK2I1SDS_4core3fmt5Debug3fmt",
	  "<object::common::SectionKind as core::fmt::Debug>::fmt" },
	{ "_RNCINvCs27w03oTvC5S_4edge6nestedReE0B4_",
	  "edge::nested::<&str>::{closure#0}" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRNtNtCs61nHkvlE5qF_9rustc_ast3"
	  "ast12GenericBoundNtB6_5Debug3fmtCsairCCGeQF1y_12rustc_expand",
	  "<&rustc_ast::ast::GenericBound as core::fmt::Debug>::fmt" },
	{ "_RNvCs27w03oTvC5S_4edge3ext",
	  "edge::ext" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRNtNtCsfqPBR87PSkx_9rustc_hir3"
	  "hir3ArmNtB6_5Debug3fmtCshpzWpLcxOCw_15rustc_mir_build",
	  "<&rustc_hir::hir::Arm as core::fmt::Debug>::fmt" },
	{ "_RNvMs_Cs27w03oTvC5S_4edgeINtB4_1BKb1_E4makeB4_",
	  "<edge::B<true>>::make" },
	{ "_RNvMsq_NtCsdadwybgsbvk_12rustc_middle2tyNtB5_21ProvisionalHidde"
	  "nType42remap_generic_params_to_declaration_params.cold",
	  "<rustc_middle::ty::ProvisionalHiddenType>::remap_generic_params_"
	  "to_declaration_params" },
	{ "_RNvXs6_Cs27w03oTvC5S_4edgeRStNtB5_5Speak5speak",
	  "<&[u16] as edge::Speak>::speak" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRNtNtCs61nHkvlE5qF_9rustc_ast3"
	  "ast9MatchKindNtB6_5Debug3fmtCsjDQNFu7nQ4C_17rustc_driver_impl",
	  "<&rustc_ast::ast::MatchKind as core::fmt::Debug>::fmt" },
	{ "_RNvMs3_Cs27w03oTvC5S_4edgeINtB5_4WrapeE4makeB5_",
	  "<edge::Wrap<str>>::make" },
	{ "_RNvMsz_NtNtNtCslNYArtu3iFV_5alloc11collections5btree3mapINtB5_8"
	  "IntoIterReNtNtCsjxgNLT6K5IZ_10serde_json5value5ValueE10dying_nex"
	  "tCs7OxSQD10jZQ_18tracing_subscriber",
	  "<alloc::collections::btree::map::IntoIter<&str, serde_json::valu"
	  "e::Value>>::dying_next" },
	{ "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace26___rust_end_short_bac"
	  "ktraceNCNvNtB6_5alloc8rust_oom0zEB6_",
	  "std::sys::backtrace::__rust_end_short_backtrace::<std::alloc::ru"
	  "st_oom::{closure#0}, !>" },
	{ "_RINvMNtNtCsjrHSEGnQ3l9_3std4sync9once_lockINtB3_8OnceLockINtNtN"
	  "tB5_6poison5mutex5MutexINtNtNtNtB7_2io8buffered9bufreader9BufRea"
	  "derNtNtB1t_5stdio8StdinRawEEE10initializeNCINvB2_11get_or_initNC"
	  "NvB26_5stdin0E0zEB7_.llvm.3643936799275306673",
	  "<std::sync::once_lock::OnceLock<std::sync::poison::mutex::Mutex<"
	  "std::io::buffered::bufreader::BufReader<std::io::stdio::StdinRaw"
	  ">>>>::initialize::<<std::sync::once_lock::OnceLock<std::sync::po"
	  "ison::mutex::Mutex<std::io::buffered::bufreader::BufReader<std::"
	  "io::stdio::StdinRaw>>>>::get_or_init<std::io::stdio::stdin::{clo"
	  "sure#0}>::{closure#0}, !>" },
	{ "_RNvXsK_NtCsgEmfK2I1SDS_4core3fmtNtB5_5ErrorNtB5_5Debug3fmt.llvm"
	  ".4311236201544885740",
	  "<core::fmt::Error as core::fmt::Debug>::fmt" },
	{ "_RNvNtNtCsfhTr2ijyTAe_16rustc_query_impl10query_impl29type_op_no"
	  "rmalize_poly_fn_sig21query_key_hash_verify.llvm.1552030048169889"
	  "6969.cold",
	  "rustc_query_impl::query_impl::type_op_normalize_poly_fn_sig::que"
	  "ry_key_hash_verify" },
	{ "_RNvNvMs_NtCslNYArtu3iFV_5alloc3vecINtB6_3VecppE7set_len18precon"
	  "dition_checkCs27w03oTvC5S_4edge",
	  "<alloc::vec::Vec<_, _>>::set_len::precondition_check" },
	{ "_RINvNvXs5_Cs3Wn5k6Pa3dh_8thin_vecINtB8_7ThinVecpENtNtNtCsgEmfK2"
	  "I1SDS_4core3ops4drop4Drop4drop18drop_non_singletonNtNtCs61nHkvlE"
	  "5qF_9rustc_ast3ast4StmtEB1R_.warm",
	  "<thin_vec::ThinVec<_> as core::ops::drop::Drop>::drop::drop_non_"
	  "singleton::<rustc_ast::ast::Stmt>" },
	{ "_RNvMs0_NtNtCsgEmfK2I1SDS_4core3fmt3numo10__fmt_inner",
	  "<u128>::_fmt_inner" },
	{ "_RNvNtNtNtCsfhTr2ijyTAe_16rustc_query_impl10query_impl9mir_shims"
	  "22execute_query_non_incr26___rust_end_short_backtrace.cold",
	  "rustc_query_impl::query_impl::mir_shims::execute_query_non_incr:"
	  ":__rust_end_short_backtrace" },
	{ "_RNvNvNtCsgEmfK2I1SDS_4core3ptr11write_bytes18precondition_check"
	  "Cs27w03oTvC5S_4edge",
	  "core::ptr::write_bytes::precondition_check" },
	{ "_RNvNvMNtCsgEmfK2I1SDS_4core5sliceSp22split_at_mut_unchecked18pr"
	  "econdition_checkCs56HGsqMBDvY_4prog",
	  "<[_]>::split_at_mut_unchecked::precondition_check" },
	{ "_RNvNtNtCs27w03oTvC5S_4edgeu9gre_6ka8iu6vxup8bu9hufig_gra",
	  "edge::gr\303\266\303\237e::\346\225\260\346\215\256::h\303\244uf"
	  "ig" },
	{ "_RINvMsj_NtCslNYArtu3iFV_5alloc3vecINtB6_3VecNtNtB8_6string6Stri"
	  "ngE14extend_trustedINtNtNtNtCsgEmfK2I1SDS_4core4iter8adapters3ma"
	  "p3MapINtNtNtB1r_3ops5range5RangejENCNvNtNtCs27w03oTvC5S_4edgeu9g"
	  "re_6ka8iu6vxup8bu9hufig_gra0EEB2H_",
	  "<alloc::vec::Vec<alloc::string::String>>::extend_trusted::<core:"
	  ":iter::adapters::map::Map<core::ops::range::Range<usize>, edge::"
	  "gr\303\266\303\237e::\346\225\260\346\215\256::h\303\244ufig::{c"
	  "losure#0}>>" },
	{ "_RNSNvYNCNvCs27w03oTvC5S_4edge4main0INtNtNtCsgEmfK2I1SDS_4core3o"
	  "ps8function6FnOnceTReEE9call_once6vtableB8_",
	  "<edge::main::{closure#0} as core::ops::function::FnOnce<(&str,)>"
	  ">::call_once::{shim:vtable#0}" },
	{ "_RNSNvYNCNCNvNtNtCshek8c565Rq6_18rustc_attr_parsing7context5earl"
	  "y17ATTRIBUTE_PARSERS0s2b_0INtNtNtCsgEmfK2I1SDS_4core3ops8functio"
	  "n6FnOnceTQINtBc_15FinalizeContextNtBc_5EarlyEEE9call_once6vtable"
	  "Be_",
	  "<rustc_attr_parsing::context::early::ATTRIBUTE_PARSERS::{closure"
	  "#0}::{closure#137} as core::ops::function::FnOnce<(&mut rustc_at"
	  "tr_parsing::context::FinalizeContext<rustc_attr_parsing::context"
	  "::Early>,)>>::call_once::{shim:vtable#0}" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_"
	  "5alloc5boxed3BoxDG_INtNtNtB4_3ops8function2FnTRL0_eEEp6OutputNtN"
	  "tBL_6string6StringNtNtB4_6marker4SyncNtB2l_4SendEL_EECs27w03oTvC"
	  "5S_4edge",
	  "core::ptr::drop_in_place::<alloc::boxed::Box<dyn for<'a> core::o"
	  "ps::function::Fn<(&'a str,), Output = alloc::string::String> + c"
	  "ore::marker::Sync + core::marker::Send>>" },
	{ "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace26___rust_end_short_bac"
	  "ktraceNCNvNtB6_9panicking13panic_handler0zEB6_",
	  "std::sys::backtrace::__rust_end_short_backtrace::<std::panicking"
	  "::panic_handler::{closure#0}, !>" },
	{ "_RINvCs3MG2ofusW15_21rustc_data_structures7outlineNCINvNtCsfhTr2"
	  "ijyTAe_16rustc_query_impl9execution14wait_for_queryINtNtNtCsdadw"
	  "ybgsbvk_12rustc_middle5query6caches11SingleCacheINtNtB1T_5erase1"
	  "0ErasedDataAhj1_EEE0zEBS_",
	  "rustc_data_structures::outline::<rustc_query_impl::execution::wa"
	  "it_for_query<rustc_middle::query::caches::SingleCache<rustc_midd"
	  "le::query::erase::ErasedData<[u8; 1]>>>::{closure#0}, !>" },
	{ "_RNvXs8_NtCslNYArtu3iFV_5alloc5boxedINtB5_3BoxDG_INtNtNtCsgEmfK2"
	  "I1SDS_4core3ops8function2FnTRL0_eEEp6OutputNtNtB7_6string6String"
	  "NtNtBR_6marker4SyncNtB23_4SendEL_ENtNtBP_4drop4Drop4dropCs27w03o"
	  "TvC5S_4edge",
	  "<alloc::boxed::Box<dyn for<'a> core::ops::function::Fn<(&'a str,"
	  "), Output = alloc::string::String> + core::marker::Sync + core::"
	  "marker::Send> as core::ops::drop::Drop>::drop" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeSINtNtCslNYArtu3iFV"
	  "_5alloc5boxed3BoxDINtNtNtB4_3ops8function6FnOnceuEp6OutputuNtNtB"
	  "4_6marker4SendEL_EECsjrHSEGnQ3l9_3std",
	  "core::ptr::drop_in_place::<[alloc::boxed::Box<dyn core::ops::fun"
	  "ction::FnOnce<(), Output = ()> + core::marker::Send>]>" },
	{ "_RNvXNtNtCsgEmfK2I1SDS_4core3fmt3numoNtB4_7Display3fmt",
	  "<u128 as core::fmt::Display>::fmt" },
	{ "_RNvMs3_NtCslNYArtu3iFV_5alloc3vecINtB5_3VecoE11extend_withCs27w"
	  "03oTvC5S_4edge",
	  "<alloc::vec::Vec<u128>>::extend_with" },
	{ "_RNvMNtCslNYArtu3iFV_5alloc5sliceSh6repeatCs27w03oTvC5S_4edge",
	  "<[u8]>::repeat" },
	{ "_RNvMsq_NtCslNYArtu3iFV_5alloc4syncINtB5_3ArcShE15copy_from_slic"
	  "eCs1ZVfQdTwIpf_5regex",
	  "<alloc::sync::Arc<[u8]>>::copy_from_slice" },
	{ "_RNvXsd_Cs27w03oTvC5S_4edgeQSbNtB5_5Speak5speak",
	  "<&mut [bool] as edge::Speak>::speak" },
	{ "_RNvYNtNtNtCslKGqiwnqz1t_17rustc_codegen_ssa4back6linker10LlbcLi"
	  "nkerNtB4_6Linker22link_framework_by_nameB8_",
	  "<rustc_codegen_ssa::back::linker::LlbcLinker as rustc_codegen_ss"
	  "a::back::linker::Linker>::link_framework_by_name" },
	{ "_RINvMs6_NtCsgvbsrvnw3yD_9hashbrown3rawINtB6_8RawTableTNtNtCs9Ha"
	  "9odS5Q7o_14rustc_borrowck8dataflow11BorrowIndexuEE14reserve_reha"
	  "shNCINvNtB8_3map11make_hasherBQ_uINtNtCsgEmfK2I1SDS_4core4hash18"
	  "BuildHasherDefaultNtCsaNkOxFfqwN5_10rustc_hash8FxHasherEE0EBU_",
	  "<hashbrown::raw::RawTable<(rustc_borrowck::dataflow::BorrowIndex"
	  ", ())>>::reserve_rehash::<hashbrown::map::make_hasher<rustc_borr"
	  "owck::dataflow::BorrowIndex, (), core::hash::BuildHasherDefault<"
	  "rustc_hash::FxHasher>>::{closure#0}>" },
	{ "_RNvXst_NtNtCs5wpeUTfK1SV_14regex_automata3dfa5denseNtB5_25State"
	  "SparseTransitionIterNtNtNtNtCsgEmfK2I1SDS_4core4iter6traits8iter"
	  "ator8Iterator4next",
	  "<regex_automata::dfa::dense::StateSparseTransitionIter as core::"
	  "iter::traits::iterator::Iterator>::next" },
	{ "_RINvXs4_NtCsdoLGDhjbLAL_13rustc_type_ir4foldINtNtCslNYArtu3iFV_"
	  "5alloc3vec3VecNtNtNtCsdadwybgsbvk_12rustc_middle3mir9statement13"
	  "StmtDebugInfoEINtB6_12TypeFoldableNtNtNtB1j_2ty7context6TyCtxtE9"
	  "fold_withNtNtB2D_25normalize_erasing_regions34NormalizeAfterEras"
	  "ingRegionsFolderECs4yP2tMXMk5E_19rustc_public_bridge",
	  "<alloc::vec::Vec<rustc_middle::mir::statement::StmtDebugInfo> as"
	  " rustc_type_ir::fold::TypeFoldable<rustc_middle::ty::context::Ty"
	  "Ctxt>>::fold_with::<rustc_middle::ty::normalize_erasing_regions:"
	  ":NormalizeAfterErasingRegionsFolder>" },
	{ "_RNvXs_NtNtCslNYArtu3iFV_5alloc3vec21spec_from_iter_nestedINtB6_"
	  "3VecIBU_mEEINtB4_18SpecFromIterNestedB13_INtNtNtNtCsgEmfK2I1SDS_"
	  "4core4iter8adapters3map3MapINtNtNtB1N_3ops5range5RangejENCINvNtN"
	  "tCs56HGsqMBDvY_4prog4deep5inner4workmE0EE9from_iterB34_",
	  "<alloc::vec::Vec<alloc::vec::Vec<u32>> as alloc::vec::spec_from_"
	  "iter_nested::SpecFromIterNested<alloc::vec::Vec<u32>, core::iter"
	  "::adapters::map::Map<core::ops::range::Range<usize>, prog::deep:"
	  ":inner::work<u32>::{closure#0}>>>::from_iter" },
	{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRINtNtCslNYArtu3iFV_5alloc3vec"
	  "3VecNtNtCsjyvvofjlheH_10rustc_span6symbol5IdentENtB6_5Debug3fmtC"
	  "sjDQNFu7nQ4C_17rustc_driver_impl",
	  "<&alloc::vec::Vec<rustc_span::symbol::Ident> as core::fmt::Debug"
	  ">::fmt" },
	{ "_RNvMNtCslNYArtu3iFV_5alloc3vecINtB2_3VecNtNtB4_6string6StringE3"
	  "newCs27w03oTvC5S_4edge",
	  "<alloc::vec::Vec<alloc::string::String>>::new" },
	{ "_RNvYNCNvNtCsi5HP9lVwY5D_16intl_pluralrules5rules12PRS_CARDINALs"
	  "F_0INtNtNtCsgEmfK2I1SDS_4core3ops8function6FnOnceTRNtNtB8_8opera"
	  "nds14PluralOperandsEE9call_onceB8_.llvm.11971603303398443784",
	  "<intl_pluralrules::rules::PRS_CARDINAL::{closure#43} as core::op"
	  "s::function::FnOnce<(&intl_pluralrules::operands::PluralOperands"
	  ",)>>::call_once" },
	{ "_RNvMsF_NtCslNYArtu3iFV_5alloc3vecINtB5_3VecINtNtB7_5boxed3BoxDN"
	  "tCs56HGsqMBDvY_4prog5ShapeEL_EE8push_mutB10_",
	  "<alloc::vec::Vec<alloc::boxed::Box<dyn prog::Shape>>>::push_mut" },
	{ "_RINvNtNtNtNtCsgEmfK2I1SDS_4core5slice4sort6shared9smallsort31sm"
	  "all_sort_general_with_scratchNtNtCslNYArtu3iFV_5alloc6string6Str"
	  "ingNvYB1s_NtNtBa_3cmp10PartialOrd2ltECs56HGsqMBDvY_4prog",
	  "core::slice::sort::shared::smallsort::small_sort_general_with_sc"
	  "ratch::<alloc::string::String, <alloc::string::String as core::c"
	  "mp::PartialOrd>::lt>" },
	{ "_RNvXs_NtNtCslNYArtu3iFV_5alloc11collections9vec_dequeINtB4_8Vec"
	  "DequeyENtNtNtCsgEmfK2I1SDS_4core3ops4drop4Drop4dropCs56HGsqMBDvY"
	  "_4prog",
	  "<alloc::collections::vec_deque::VecDeque<u64> as core::ops::drop"
	  "::Drop>::drop" },
	{ "_RNSNvYNCNCNvNtNtCshek8c565Rq6_18rustc_attr_parsing7context5earl"
	  "y17ATTRIBUTE_PARSERS0s1G_0INtNtNtCsgEmfK2I1SDS_4core3ops8functio"
	  "n6FnOnceTQINtBc_13AcceptContextNtBc_5EarlyERNtNtBe_6parser9ArgPa"
	  "rserEE9call_once6vtableBe_",
	  "<rustc_attr_parsing::context::early::ATTRIBUTE_PARSERS::{closure"
	  "#0}::{closure#106} as core::ops::function::FnOnce<(&mut rustc_at"
	  "tr_parsing::context::AcceptContext<rustc_attr_parsing::context::"
	  "Early>, &rustc_attr_parsing::parser::ArgParser)>>::call_once::{s"
	  "him:vtable#0}" },
	{ "_RNvMNtCs61nHkvlE5qF_9rustc_ast6formatNtB2_15FormatArguments7by_"
	  "name",
	  "<rustc_ast::format::FormatArguments>::by_name" },
	{ "_RNvYNCNvXs0_NtNtCsjrHSEGnQ3l9_3std6thread9lifecycleINtBa_6Packe"
	  "tjENtNtNtCsgEmfK2I1SDS_4core3ops4drop4Drop4drop0INtNtB16_8functi"
	  "on6FnOnceuE9call_onceCs56HGsqMBDvY_4prog",
	  "<<std::thread::lifecycle::Packet<usize> as core::ops::drop::Drop"
	  ">::drop::{closure#0} as core::ops::function::FnOnce<()>>::call_o"
	  "nce" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtCs8nUgGD5k2ut_8s"
	  "mallvec8SmallVecAINtNtCsdoLGDhjbLAL_13rustc_type_ir8outlives9Com"
	  "ponentNtNtNtCsdadwybgsbvk_12rustc_middle2ty7context6TyCtxtEj4_EE"
	  "Cs9Ha9odS5Q7o_14rustc_borrowck",
	  "core::ptr::drop_in_place::<smallvec::SmallVec<[rustc_type_ir::ou"
	  "tlives::Component<rustc_middle::ty::context::TyCtxt>; 4]>>" },
	{ "_RNCNCNvNtNtCshek8c565Rq6_18rustc_attr_parsing7context4late17ATT"
	  "RIBUTE_PARSERS0s1Q_0B9_",
	  "rustc_attr_parsing::context::late::ATTRIBUTE_PARSERS::{closure#0"
	  "}::{closure#116}" },
	{ "_RNvXNvNtCsdoLGDhjbLAL_13rustc_type_ir9predicateso_1__INtB4_20Ex"
	  "istentialPredicateNtNtNtCsdadwybgsbvk_12rustc_middle2ty7context6"
	  "TyCtxtEINtNtCs2fqUAidLEe7_15rustc_serialize9serialize9DecodableN"
	  "tNtNtCs5FxD4tM6viY_14rustc_metadata5rmeta7decoder21MetadataDecod"
	  "eContextE6decodeB38_",
	  "<rustc_type_ir::predicate::ExistentialPredicate<rustc_middle::ty"
	  "::context::TyCtxt> as rustc_serialize::serialize::Decodable<rust"
	  "c_metadata::rmeta::decoder::MetadataDecodeContext>>::decode" },
	{ "_RNvXs_NtNtCsjrHSEGnQ3l9_3std4hash6randomNtB4_11RandomStateNtNtC"
	  "sgEmfK2I1SDS_4core4hash11BuildHasher12build_hasherCs56HGsqMBDvY_"
	  "4prog",
	  "<std::hash::random::RandomState as core::hash::BuildHasher>::bui"
	  "ld_hasher" },
	{ "_RNvXs0_NtCsjargyg6XnQl_16rustc_hir_typeck9writebackNtB5_11Write"
	  "backCxNtNtCsfqPBR87PSkx_9rustc_hir10intravisit7Visitor18visit_in"
	  "line_const.cold",
	  "<rustc_hir_typeck::writeback::WritebackCx as rustc_hir::intravis"
	  "it::Visitor>::visit_inline_const" },
	{ "_RNvXs1_NtCsh05LIuhHLB1_13rustc_resolve19build_reduced_graphNtB5"
	  "_24BuildReducedGraphVisitorNtNtCs61nHkvlE5qF_9rustc_ast5visit7Vi"
	  "sitor10visit_stmt",
	  "<rustc_resolve::build_reduced_graph::BuildReducedGraphVisitor as"
	  " rustc_ast::visit::Visitor>::visit_stmt" },
	{ "_RNvXs0_NtNtCs6mNkMfao1uC_12aho_corasick6packed7patternNtB5_7Pat"
	  "ternNtNtCsgEmfK2I1SDS_4core3fmt5Debug3fmt",
	  "<aho_corasick::packed::pattern::Pattern as core::fmt::Debug>::fm"
	  "t" },
	{ "_RNvXst_NtNtCsdadwybgsbvk_12rustc_middle2ty9predicateNtB5_9Predi"
	  "cateINtNtCsdoLGDhjbLAL_13rustc_type_ir6upcast10UpcastFromNtNtB7_"
	  "7context6TyCtxtINtNtB18_9predicate19ProjectionPredicateB1U_EE11u"
	  "pcast_from",
	  "<rustc_middle::ty::predicate::Predicate as rustc_type_ir::upcast"
	  "::UpcastFrom<rustc_middle::ty::context::TyCtxt, rustc_type_ir::p"
	  "redicate::ProjectionPredicate<rustc_middle::ty::context::TyCtxt>"
	  ">>::upcast_from" },
	{ "_RNCNCNvNtNtCshek8c565Rq6_18rustc_attr_parsing7context4late17ATT"
	  "RIBUTE_PARSERS0s1l_0B9_",
	  "rustc_attr_parsing::context::late::ATTRIBUTE_PARSERS::{closure#0"
	  "}::{closure#85}" },
	{ "_RNvXNtCs3lCblvf8hsb_8schemars3serNtB2_10SerializerNtNtCs5zbUM8G"
	  "hRDQ_10serde_core3ser10Serializer13serialize_u64",
	  "<schemars::ser::Serializer as serde_core::ser::Serializer>::seri"
	  "alize_u64" },
	{ "_RNvMNtCsgvbsrvnw3yD_9hashbrown11rustc_entryINtNtB4_3map7HashMap"
	  "NtNtNtCsdadwybgsbvk_12rustc_middle2ty12generic_args10GenericArgj"
	  "NtCsbnm8woe3Zqs_10rustc_hash13FxBuildHasherE11rustc_entryCsjargy"
	  "g6XnQl_16rustc_hir_typeck",
	  "<hashbrown::map::HashMap<rustc_middle::ty::generic_args::Generic"
	  "Arg, usize, rustc_hash::FxBuildHasher>>::rustc_entry" },
	{ "_RINvMsb_NtNtNtCsdadwybgsbvk_12rustc_middle2ty5print6prettyNtB6_"
	  "10FmtPrinter16name_all_regionsINtNtCsdoLGDhjbLAL_13rustc_type_ir"
	  "7ty_kind5FnSigNtNtBa_7context6TyCtxtEECsaspd4q2l9mR_21rustc_trai"
	  "t_selection",
	  "<rustc_middle::ty::print::pretty::FmtPrinter>::name_all_regions:"
	  ":<rustc_type_ir::ty_kind::FnSig<rustc_middle::ty::context::TyCtx"
	  "t>>" },
	{ "_RINvNtCsfhTr2ijyTAe_16rustc_query_impl8plumbing26mk_query_stack"
	  "_frame_extraINtNtNtCsdadwybgsbvk_12rustc_middle5query6caches12De"
	  "faultCacheINtNtB1i_2ty20PseudoCanonicalInputINtNtCsdoLGDhjbLAL_1"
	  "3rustc_type_ir9predicate8TraitRefNtNtB2e_7context6TyCtxtEEINtNtB"
	  "1g_5erase10ErasedDataAhj10_EEEB4_",
	  "rustc_query_impl::plumbing::mk_query_stack_frame_extra::<rustc_m"
	  "iddle::query::caches::DefaultCache<rustc_middle::ty::PseudoCanon"
	  "icalInput<rustc_type_ir::predicate::TraitRef<rustc_middle::ty::c"
	  "ontext::TyCtxt>>, rustc_middle::query::erase::ErasedData<[u8; 16"
	  "]>>>" },
	{ "_RNvYNCNvNtNtCsfhTr2ijyTAe_16rustc_query_impl10query_impl12lit_t"
	  "o_const17make_query_vtables0_0INtNtNtCsgEmfK2I1SDS_4core3ops8fun"
	  "ction6FnOnceTRINtNtNtCsdadwybgsbvk_12rustc_middle5query5erase10E"
	  "rasedDataAhj10_EEE9call_onceBa_",
	  "<rustc_query_impl::query_impl::lit_to_const::make_query_vtable::"
	  "{closure#2} as core::ops::function::FnOnce<(&rustc_middle::query"
	  "::erase::ErasedData<[u8; 16]>,)>>::call_once" },
	{ "_RNvXNtCs3lCblvf8hsb_8schemars3serNtB2_10SerializerNtNtCs5zbUM8G"
	  "hRDQ_10serde_core3ser10Serializer14serialize_u128",
	  "<schemars::ser::Serializer as serde_core::ser::Serializer>::seri"
	  "alize_u128" },
};

/* Made by hand, Massif's labels too: malformed Rust names stay raw or fall
   through to the C++ demangler exactly as in Valgrind (which tries Rust
   first, then C++), ".llvm"/".cold" suffixes, and C++ names, which
   libstdc++'s demangler spells as Massif does. */
static const struct pair edge[] = {
	{ "_ZN4prog4mainE",
	  "prog::main" },
	{ "_ZN4prog4main17h0123456789ABCDEFE",
	  "prog::main::h0123456789ABCDEF" },
	{ "_ZN4prog4main17h0123456789abcdeE",
	  "_ZN4prog4main17h0123456789abcdeE" },
	{ "_ZN4prog4main17hg123456789abcdefE",
	  "prog::main::hg123456789abcdef" },
	{ "_ZN4prog10foo$XX$bar17h0123456789abcdefE",
	  "prog::foo$XX$bar" },
	{ "_ZN4prog8caf$ue9$17h0123456789abcdefE",
	  "prog::caf$ue9$" },
	{ "_ZN4prog9x$u1f600$17h0123456789abcdefE",
	  "prog::x$u1f600$" },
	{ "_ZN4prog8caf$u7e$17h0123456789abcdefE",
	  "prog::caf~" },
	{ "_ZN4prog4a..b17h0123456789abcdefE",
	  "prog::a::b" },
	{ "_ZN4prog3a.b17h0123456789abcdefE",
	  "prog::a.b" },
	{ "_ZN4prog10_$LT$T$GT$17h0123456789abcdefE",
	  "prog::<T>" },
	{ "_ZN4prog9$LT$T$GT$17h0123456789abcdefE",
	  "prog::<T>" },
	{ "_ZN4prog31$SP$$BP$$RF$$LT$$GT$$LP$$RP$$C$17h0123456789abcdefE",
	  "prog::@*&<>()," },
	{ "_ZN4prog50$u20$$u27$$u5b$$u5d$$u7b$$u7d$$u7e$$u3b$$u2b$$u22$17h0"
	  "123456789abcdefE",
	  "prog:: '[]{}~;+\"" },
	{ "_ZN4prog4main17h0123456789abcdefE.llvm.1234",
	  "prog::main" },
	{ "_ZN4prog4main17h0123456789abcdefE.cold",
	  "prog::main" },
	{ "_ZN4prog4main17h0123456789abcdefE.constprop.0",
	  "prog::main" },
	{ "_ZN4prog4main17h0123456789abcdefEv",
	  "prog::main::h0123456789abcdef()" },
	{ "_ZN4main17h0123456789abcdefE",
	  "main" },
	{ "_ZN4prog4main16h0123456789abcdeE",
	  "prog::main::h0123456789abcde" },
	{ "_RNvCs1234_4prog4main",
	  "prog::main" },
	{ "_RNvCs1234_4prog4main.llvm.999",
	  "prog::main" },
	{ "_RNvCs1234_4prog4main.cold",
	  "prog::main" },
	{ "_RNvCs1234_4prog4mainCs1234_4prog",
	  "prog::main" },
	{ "_RNvC4prog4main",
	  "prog::main" },
	{ "_RNvNtCs1234_4prog3mod4main",
	  "prog::mod::main" },
	{ "_RNvC4prog",
	  "_RNvC4prog" },
	{ "_RNvC",
	  "_RNvC" },
	{ "_R",
	  "_R" },
	{ "_RC4prog",
	  "prog" },
	{ "_Rxyz",
	  "_Rxyz" },
	{ "_R0NvC4prog4main",
	  "_R0NvC4prog4main" },
	{ "_R1NvC4prog4main",
	  "_R1NvC4prog4main" },
	{ "_RNvNvC4prog4mains_1a",
	  "prog::main::a" },
	{ "_RNCNvC4prog4main0B3_",
	  "prog::main::{closure#0}" },
	{ "_RNvYNtC4prog3FooNtC4prog3Bar3baz",
	  "<prog::Foo as prog::Bar>::baz" },
	{ "_RINvC4prog3fooKj1f_E",
	  "prog::foo::<31>" },
	{ "_RINvC4prog3fooKin1f_E",
	  "prog::foo::<-31>" },
	{ "_RINvC4prog3fooKb1_E",
	  "prog::foo::<true>" },
	{ "_RINvC4prog3fooKc61_E",
	  "prog::foo::<'a'>" },
	{ "_RINvC4prog3fooKpE",
	  "prog::foo::<_>" },
	{ "_RINvC4prog3fooReE",
	  "prog::foo::<&str>" },
	{ "_RINvC4prog3fooRL_hE",
	  "prog::foo::<&u8>" },
	{ "_RINvC4prog3fooFG_RL0_hEuE",
	  "prog::foo::<for<'a> fn(&'a u8)>" },
	{ "_RINvC4prog3fooDNtC4prog5Traitp4ItemhEL_E",
	  "prog::foo::<dyn prog::Trait<Item = u8>>" },
	{ "_RNvNtCs1234_4prog7u8_gDa_4main",
	  "prog::u8_gDa_::main" },
	{ "_RNvNtCs1234_4prog13u6grea_zwa9d4main",
	  "_RNvNtCs1234_4prog13u6grea_zwa9d4main" },
	{ "_Z3fooi",
	  "foo(int)" },
	{ "_ZN3foo3barEv",
	  "foo::bar()" },
	{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
	  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
	{ "_ZN3foo17h0123456789abcdefEv",
	  "foo::h0123456789abcdef()" },
	{ "_ZN3foo17h0123456789abcdefE",
	  "foo" },
	{ "_ZZ4mainENKUlvE_clEv",
	  "main::{lambda()#1}::operator()() const" },
	{ "_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv",
	  "__gnu_cxx::new_allocator<char>::allocate(unsigned long, void con"
	  "st*)" },
	{ "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv",
	  "std::__cxx11::basic_string<char, std::char_traits<char>, std::al"
	  "locator<char> >::size() const" },
	{ "_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_",
	  "std::basic_ostream<char, std::char_traits<char> >& std::endl<cha"
	  "r, std::char_traits<char> >(std::basic_ostream<char, std::char_t"
	  "raits<char> >&)" },
	{ "_ZTv0_n24_N3FooD1Ev",
	  "virtual thunk to Foo::~Foo()" },
	{ "_ZL3barv",
	  "bar()" },
	{ "_ZGVZ4mainE1x",
	  "guard variable for main::x" },
	{ "_ZN3foo3barEv.cold",
	  "foo::bar() [clone .cold]" },
	{ "_ZN3foo3barEv.constprop.0",
	  "foo::bar() [clone .constprop.0]" },
	{ "_ZN3foo3barEv.llvm.42",
	  "foo::bar() [clone .llvm.42]" },
	{ "_Z",
	  "_Z" },
	{ "_ZN",
	  "_ZN" },
	{ "_Zfoo",
	  "_Zfoo" },
	{ "_ZN3fooE",
	  "foo" },
	{ "_ZN3foo3barE",
	  "foo::bar" },
};

/* Rules of heaptrace's own, not Massif's demangler: names that are not
   mangled are kept, and a symbol version is cut off before demangling and
   appended again (see demangle.h). */
static const struct pair own[] = {
	{ "main", "main" },
	{ "malloc", "malloc" },
	{ "", "" },
	{ "_", "_" },
	{ "__R", "__R" },
	{ "ZN4prog4main17h0123456789abcdefE",
	  "ZN4prog4main17h0123456789abcdefE" },
	{ "__ZN4prog4main17h0123456789abcdefE",
	  "__ZN4prog4main17h0123456789abcdefE" },
	{ "_Znwm@@GLIBCXX_3.4", "operator new(unsigned long)@@GLIBCXX_3.4" },
	{ "_ZNSo3putEc@GLIBCXX_3.4", "std::ostream::put(char)@GLIBCXX_3.4" },
	{ "_ZN4prog4main17h0123456789abcdefE@@V1", "prog::main@@V1" },
	{ "_RNvCs1234_4prog4main@V2", "prog::main@V2" },
	{ "_Zfoo@@V1", "_Zfoo@@V1" },
	{ "memcpy@GLIBC_2.2.5", "memcpy@GLIBC_2.2.5" },
};

static int
check_table(const char *what, const struct pair *t, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		char *got = sym_demangle(t[i].mangled);

		CHECK(strcmp(got, t[i].expected) == 0,
		      "%s[%zu] %s\n  got      %s\n  expected %s", what, i,
		      t[i].mangled, got, t[i].expected);
		bad += strcmp(got, t[i].expected) != 0;
		free(got);
	}
	printf("%s: %zu names, %zu right\n", what, n,
	       n - (size_t)bad);
	return bad;
}

#define CHECK_TABLE(t) check_table(#t, t, sizeof(t) / sizeof(t[0]))

int
main(void)
{
	CHECK_TABLE(legacy);
	CHECK_TABLE(v0);
	CHECK_TABLE(edge);
	CHECK_TABLE(own);
	return failures ? 1 : 0;
}
