-- Alloc.hs - a Haskell program that spends much of its time in the
-- garbage collector (it keeps a growing list alive, so every major
-- collection copies it), sampled by tests/test_sampling.sh: its GC time
-- must come under [GC], never under the program's own stacks.  Runs for
-- about argv[1] seconds.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import System.CPUTime (getCPUTime)
import System.Environment (getArgs)

{-# NOINLINE build #-}
build :: Int -> [Int] -> [Int]
build 0 acc = acc
build n acc = build (n - 1) (n * 7 `rem` 1013 : acc)

loop :: Integer -> [Int] -> Int -> IO Int
loop end kept !i = do
  t <- getCPUTime
  if t >= end
    then return (length kept)
    else do
      let kept' = take 2000000 (build 20000 kept)
      sum (take 10 kept') `seq` loop end kept' (i + 1)

main :: IO ()
main = do
  args <- getArgs
  let secs = case args of { (s:_) -> read s; _ -> 2.0 } :: Double
  t0 <- getCPUTime
  n <- loop (t0 + round (secs * 1e12)) [] 0
  print n
