-- A program of four labelled worker threads and a spark, for the threaded RTS
-- (tests/data/eventlog: its eventlog on two capabilities).
import Control.Concurrent
import Control.Monad
import qualified Data.Map.Strict as M
import GHC.Conc (labelThread, par, pseq)

work :: Int -> Int
work n = M.foldl' (+) 0 (M.fromList [(i, i * 2) | i <- [1 .. n]])

main :: IO ()
main = do
  vs <- forM [1 .. 4 :: Int] $ \k -> do
    v <- newEmptyMVar
    t <- forkIO $ putMVar v $! work (50000 * k)
    labelThread t ("worker " ++ show k)
    return v
  rs <- mapM takeMVar vs
  let a = work 100000; b = work 120000
  print (a `par` (b `pseq` (a + b)), sum rs)
