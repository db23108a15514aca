-- Hot.hs - a Haskell program with a known profile, sampled as a xensim
-- domain by tests/test_sampling.sh (ghc -O2 -g, not profiled): outer ->
-- middle -> crunchHot, where neither call is a tail call, so their
-- return frames stay on the STG stack (a frame-pointer walk cannot see
-- them).  Runs for about argv[1] seconds.
{-# LANGUAGE BangPatterns #-}
module Main (main, crunchHot, middle, outer) where

import System.CPUTime (getCPUTime)
import System.Environment (getArgs)

{-# NOINLINE crunchHot #-}
crunchHot :: Int -> Int -> Int
crunchHot !acc 0 = acc
crunchHot !acc n = crunchHot ((acc * 31 + n) `rem` 1000003) (n - 1)

{-# NOINLINE middle #-}
middle :: Int -> Int
middle n = crunchHot 7 n * 3 + 1

{-# NOINLINE outer #-}
outer :: Int -> Int
outer n = middle n `rem` 17 + 2

loop :: Integer -> Int -> Int -> IO Int
loop end !i !acc = do
  t <- getCPUTime
  if t >= end then return acc else loop end (i + 1) (acc + outer (200000 + i `rem` 3))

main :: IO ()
main = do
  args <- getArgs
  let secs = case args of { (s:_) -> read s; _ -> 2.0 } :: Double
  t0 <- getCPUTime
  r <- loop (t0 + round (secs * 1e12)) 0 0
  print r
