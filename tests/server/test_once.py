"""``Once``: the first ``get`` makes the object, every later one (from any thread) gets that same one."""
import threading
import time

from autoreg_server.once import Once


def test_many_threads_asking_at_once_make_one_object_and_reset_makes_another():
    made = []

    def make():
        time.sleep(0.05)  # slow enough that every thread asks while the first is still making it
        made.append(object())
        return made[-1]

    once = Once(make)
    got = []
    threads = [threading.Thread(target=lambda: got.append(once.get())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and got == [made[0]] * 8
    once.reset()
    assert once.get() is made[1] and len(made) == 2 and once.get() is made[1]
