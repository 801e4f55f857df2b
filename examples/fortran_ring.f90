! fortran_ring: a Fortran MPI workload for collscope (use mpi).
! Each iteration passes a token around the ring with MPI_Send/MPI_Recv
! (rank 0 sends first, the others receive first), sums it with
! MPI_Allreduce and ends with MPI_Barrier. Every rank then prints the MPI
! calls it made, as "calls: rank R MPI_Send=.. MPI_Recv=.. ...", and rank 0
! prints "ring result: X".
! Usage: fortran_ring [ITERATIONS]   (default 20)
program fortran_ring
  use mpi
  implicit none
  integer :: ierr, rank, nrank, left, right, iter, niter, i
  integer :: nsend, nrecv, nallreduce, nbarrier
  integer :: status(MPI_STATUS_SIZE)
  integer, parameter :: n = 256
  double precision :: token(n), total(n)
  character(len=32) :: arg

  niter = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) niter
  end if
  nsend = 0; nrecv = 0; nallreduce = 0; nbarrier = 0

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nrank, ierr)
  right = mod(rank + 1, nrank)
  left = mod(rank + nrank - 1, nrank)
  do i = 1, n
    token(i) = rank + i * 1.0d-3
  end do

  do iter = 1, niter
    if (nrank > 1) then
      if (rank == 0) then
        call MPI_Send(token, n, MPI_DOUBLE_PRECISION, right, 7, MPI_COMM_WORLD, ierr)
        nsend = nsend + 1
        call MPI_Recv(token, n, MPI_DOUBLE_PRECISION, left, 7, MPI_COMM_WORLD, status, ierr)
        nrecv = nrecv + 1
      else
        call MPI_Recv(token, n, MPI_DOUBLE_PRECISION, left, 7, MPI_COMM_WORLD, status, ierr)
        nrecv = nrecv + 1
        token = token + 1.0d0
        call MPI_Send(token, n, MPI_DOUBLE_PRECISION, right, 7, MPI_COMM_WORLD, ierr)
        nsend = nsend + 1
      end if
    end if
    call MPI_Allreduce(token, total, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    nallreduce = nallreduce + 1
    token = total / nrank
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    nbarrier = nbarrier + 1
  end do

  if (rank == 0) write (*, '(a, es22.15)') 'ring result: ', sum(token)
  write (*, '(a, i0, a, i0, a, i0, a, i0, a, i0)') 'calls: rank ', rank, &
    ' MPI_Send=', nsend, ' MPI_Recv=', nrecv, ' MPI_Allreduce=', nallreduce, &
    ' MPI_Barrier=', nbarrier
  call MPI_Finalize(ierr)
end program fortran_ring
