(* hot_ml.ml - an OCaml native program with a known profile, sampled as a
   xensim domain by tests/test_sampling_real.sh without --symbols (built
   with ocamlopt -g: no frame pointers, its callers found through the
   DWARF CFI ocamlopt emits; its functions named as OCaml mangles them,
   camlHot_ml__crunch_NNN, which must come out as Hot_ml.crunch):
   rounds -> crunch takes about 70% of its time, rounds -> cool about 30%
   (perf record --call-graph=dwarf: Hot_ml.crunch 70.0%, Hot_ml.cool
   30.0%), each [@inline never].  Runs for Sys.argv.(1) seconds of CPU
   time whatever the machine's speed, a round every 14 ms: few getrusage
   calls (Sys.time) for a pause to stop at. *)

(* first in the module: its code starts at camlHot_ml__code_begin, a
   second name for the same address, which a symbol table may give *)
let[@inline never] cpu_seconds () = Sys.time ()

let[@inline never] crunch n =
  let s = ref 0 in
  for i = 0 to n - 1 do
    s := !s + ((i * i) lxor (!s lsr 3))
  done;
  !s

let[@inline never] cool n =
  let s = ref 1 in
  for i = 0 to n - 1 do
    s := (!s * 2654435761) + i
  done;
  !s

let[@inline never] rounds seconds =
  let sink = ref 0 in
  let fin = cpu_seconds () +. seconds in
  while cpu_seconds () < fin do
    sink := !sink + crunch 10_000_000;
    sink := !sink lxor cool 3_500_000
  done;
  !sink

let () =
  let seconds = if Array.length Sys.argv > 1 then float_of_string Sys.argv.(1) else 2.0 in
  Printf.printf "%d\n" (rounds seconds)
