-- A small program whose heap grows and shrinks over about a second.
import qualified Data.Map.Strict as M
import Debug.Trace (traceEventIO, traceMarkerIO)
import Control.Concurrent

build :: Int -> M.Map Int String
build n = M.fromList [(i, show i) | i <- [1 .. n]]

main :: IO ()
main = do
  traceMarkerIO "start"
  mv <- newEmptyMVar
  _ <- forkIO $ do
    let m = build 800000
    putMVar mv (M.size m, sum (map length (M.elems m)))
  r <- takeMVar mv
  traceEventIO ("result " ++ show r)
  let m2 = build 600000
  print (M.foldl' (\a s -> a + length s) 0 m2)
  let xs = [1 .. 3000000 :: Int]
  print (sum xs, length (filter even (map (* 3) xs)), length xs)
  traceMarkerIO "end"
