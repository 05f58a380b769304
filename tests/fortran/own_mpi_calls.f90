! A Fortran program that calls MPI functions of its own (MPI_Wtime,
! MPI_Barrier, MPI_Allreduce) besides its X-operations, built as
! mpix_xrdma_f08(3) says: with the linker's --as-needed (Debian's default)
! XRDMA must still set its window up. Rank 0 adds to the last rank's words
! with MPIX_Xput and reads their scaled sum back with MPIX_Xget (functions
! of examples/mpi_f08_ifunc.c, image path in argument 1); exit status 0
! when every answer holds.
program own_mpi_calls
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_int64_t
  use mpi_f08
  use mpix_xrdma
  implicit none
  integer, parameter :: N = 4
  integer(MPI_ADDRESS_KIND), parameter :: zero = 0
  integer :: rank, nranks, t, i, ierr, ok, msglen
  integer(c_int64_t), pointer :: w(:)
  integer(c_int64_t) :: d(N), s, scale
  double precision :: t0
  type(c_ptr) :: base
  type(MPI_Win) :: win
  type(MPIX_Ifunc) :: add, ssum
  character(len=4096) :: path
  character(len=MPI_MAX_ERROR_STRING) :: msg

  call MPI_Init()
  t0 = MPI_Wtime()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  t = nranks - 1
  call MPI_Win_allocate(int(N * 8, MPI_ADDRESS_KIND), 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
  call c_f_pointer(base, w, [N])
  do i = 1, N
    w(i) = 10 * rank + i
  end do
  call MPI_Barrier(MPI_COMM_WORLD)
  ok = 1
  if (rank == 0) then
    call get_command_argument(1, path)
    call MPIX_Ifunc_load(path, 'add_i64', add)
    call MPIX_Ifunc_load(path, 'scaled_sum', ssum)
    call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN)
    d = [(int(i, c_int64_t), i = 1, N)]
    scale = 3
    call MPI_Win_lock_all(0, win)
    call MPIX_Xput(d, N, MPI_INTEGER8, t, zero, N, MPI_INTEGER8, add, win=win, ierror=ierr)
    if (ierr /= MPI_SUCCESS) then
      call MPI_Error_string(ierr, msg, msglen)
      print '(a, a)', 'MPIX_Xput: ', msg(1:msglen)
      ok = 0
    end if
    call MPIX_Xget(s, 1, MPI_INTEGER8, t, zero, N, MPI_INTEGER8, ssum, scale, win, ierr)
    if (ierr == MPI_SUCCESS) call MPI_Win_flush(t, win, ierr)
    if (ierr /= MPI_SUCCESS) then
      call MPI_Error_string(ierr, msg, msglen)
      print '(a, a)', 'MPIX_Xget: ', msg(1:msglen)
      ok = 0
    end if
    call MPI_Win_unlock_all(win)
    ! (10t+i) + i summed over i, times 3
    if (ok == 1 .and. s /= 3 * (N * 10 * t + N * (N + 1))) ok = 0
    print '(a, i0, a, i0)', 'scaled sum at rank ', t, ': ', s
    call MPIX_Ifunc_free(add)
    call MPIX_Ifunc_free(ssum)
  end if
  call MPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
  if (rank == 0) print '(a, f0.3, a)', 'elapsed ', MPI_Wtime() - t0, ' s'
  call MPI_Win_free(win)
  call MPI_Finalize()
  if (ok /= 1) error stop
end program own_mpi_calls
